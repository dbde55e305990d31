// What the client tells the hub when the app could not draw a tree (DESIGN §15 "What clients
// report"): the `render_error` message made from whatever the app threw. The JavaScript twin of
// Sources/PushHubClient/RenderErrorReport.swift.

/** The longest `message` a `render_error` carries (docs/protocol.md): longer text is cut to it. */
export const RENDER_ERROR_MESSAGE_LIMIT = 1000;

/** The longest `component` a `render_error` carries: a longer name is cut to it. */
export const RENDER_ERROR_COMPONENT_LIMIT = 200;

/**
 * The `render_error` message for `version` of `screen` failing with `error` (anything thrown):
 * `{ type: "render_error", screen, version, hash?, component?, message }`.
 *
 * - `hash`: the hub's hash of that version, when the caller knows it (absent otherwise).
 * - `component`: `error.component` when it is a string (the app names the component that
 *   failed, e.g. `Object.assign(new Error("no image"), { component: "Carousel" })`), cut to
 *   RENDER_ERROR_COMPONENT_LIMIT; absent otherwise.
 * - `message`: `String(error.message ?? error)`, cut to RENDER_ERROR_MESSAGE_LIMIT.
 *
 * Cuts count Unicode code points (what the hub counts) and never split one; a lone surrogate
 * becomes U+FFFD, so the message always parses. Never throws, whatever `error` is.
 */
export function renderErrorMessage(screen, version, hash, error) {
  const message = { type: "render_error", screen, version };
  if (typeof hash === "string") message.hash = hash;
  const component = fieldOf(error, "component");
  if (typeof component === "string") message.component = wellFormedPrefix(component, RENDER_ERROR_COMPONENT_LIMIT);
  message.message = wellFormedPrefix(describeThrown(error), RENDER_ERROR_MESSAGE_LIMIT);
  return message;
}

/** `String(error.message ?? error)`, or a fixed sentence for a value that cannot be made a string. */
function describeThrown(error) {
  try {
    return String(fieldOf(error, "message") ?? error);
  } catch {
    return "the render callback threw a value that cannot be turned into a string";
  }
}

/** `value[name]` when `value` is an object or function that has it; undefined otherwise (and when reading it throws). */
function fieldOf(value, name) {
  if (value === null || (typeof value !== "object" && typeof value !== "function")) return undefined;
  try {
    return value[name];
  } catch {
    return undefined;
  }
}

/**
 * The first `limit` code points of `text` (a surrogate pair is one; never split), each lone
 * surrogate replaced by U+FFFD: JSON parsers that hold to I-JSON, the hub's among them, refuse one.
 */
function wellFormedPrefix(text, limit) {
  let out = "";
  let start = 0; // where the run copied as it is begins
  let end = 0;
  for (let count = 0; count < limit && end < text.length; count++) {
    const unit = text.charCodeAt(end);
    if ((unit & 0xf800) !== 0xd800) {
      end += 1; // not a surrogate
    } else if ((unit & 0xfc00) === 0xd800 && (text.charCodeAt(end + 1) & 0xfc00) === 0xdc00) {
      end += 2; // a pair
    } else {
      out += text.slice(start, end) + "\ufffd";
      start = end += 1;
    }
  }
  return out + text.slice(start, end);
}
