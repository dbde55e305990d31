// What this build can render (DESIGN §16): the `components` client option, sent as
// hello.components and as an HTTP fetch's `components` query parameter. The JavaScript twin of
// Sources/PushHubClient/ComponentCapabilities.swift.

/** A component name (docs/protocol.md "hello"): 1–100 of A–Z a–z 0–9 . _ - (case matters). */
const COMPONENT_NAME = /^[A-Za-z0-9._-]{1,100}$/;

/** The most components a hello may declare. */
export const MAX_COMPONENTS = 1000;

/** The highest component version a client may declare. */
export const MAX_COMPONENT_VERSION = 1000;

/**
 * `components` as hello carries it: a frozen copy of a plain object of component name → the
 * highest version of it this build renders (an integer 1…1000), at most 1000 names; `{}` declares
 * that it renders no registered component. `undefined` (not given) stays undefined: the hub then
 * uses the profile registered for the app's platform and version. Anything else throws a
 * TypeError that says what is wrong, so a bad list never reaches the hub.
 */
export function checkedComponents(components) {
  if (components === undefined) return undefined;
  const problem = componentsProblem(components);
  if (problem) {
    throw new TypeError(`PushHub: components must map each component name to the highest version this app renders, `
      + `e.g. { Carousel: 2, Text: 1 }: ${problem}`);
  }
  return Object.freeze({ ...components });
}

/** `Carousel:2,Text:1`: a checked list as the `components` query parameter of an HTTP fetch ("" for `{}`). */
export function componentsQuery(components) {
  return Object.entries(components).map(([name, version]) => `${name}:${version}`).join(",");
}

/** Why `components` cannot be sent as hello.components, or null when it can. */
function componentsProblem(components) {
  if (components === null || typeof components !== "object" || Array.isArray(components)) {
    return `got ${components === null ? "null" : Array.isArray(components) ? "an array" : typeof components}, not an object`;
  }
  const prototype = Object.getPrototypeOf(components);
  if (prototype !== Object.prototype && prototype !== null) return "got a " + (prototype.constructor?.name ?? "class instance") + ", not a plain object";
  const names = Object.keys(components);
  if (names.length > MAX_COMPONENTS) return `${names.length} components, at most ${MAX_COMPONENTS}`;
  for (const name of names) {
    if (!COMPONENT_NAME.test(name)) return `${JSON.stringify(name)} is not a component name (1–100 of A–Z a–z 0–9 . _ -)`;
    const version = components[name];
    if (!Number.isInteger(version) || version < 1 || version > MAX_COMPONENT_VERSION) {
      return `${name} is ${typeof version === "string" ? JSON.stringify(version) : String(version)}, not an integer from 1 to ${MAX_COMPONENT_VERSION}`;
    }
  }
  return null;
}
