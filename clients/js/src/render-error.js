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
 * Cuts count Unicode code points and never split one, so the text stays within the limit however
 * the hub counts characters (scalars, grapheme clusters). Never throws, whatever `error` is.
 */
export function renderErrorMessage(screen, version, hash, error) {
  const message = { type: "render_error", screen, version };
  if (typeof hash === "string") message.hash = hash;
  const component = fieldOf(error, "component");
  if (typeof component === "string") message.component = cutToCodePoints(component, RENDER_ERROR_COMPONENT_LIMIT);
  message.message = cutToCodePoints(describeThrown(error), RENDER_ERROR_MESSAGE_LIMIT);
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

/** `text` cut to its first `limit` code points (a surrogate pair is one; never split). */
function cutToCodePoints(text, limit) {
  if (text.length <= limit) return text; // fewer UTF-16 units than the limit: fewer code points too
  let end = 0;
  for (let count = 0; count < limit && end < text.length; count++) {
    const pair = (text.charCodeAt(end) & 0xfc00) === 0xd800 && (text.charCodeAt(end + 1) & 0xfc00) === 0xdc00;
    end += pair ? 2 : 1;
  }
  return text.slice(0, end);
}
