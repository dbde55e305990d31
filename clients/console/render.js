// Screen trees drawn two ways: as the demo page draws them (the hub's screen renderer,
// clients/js/screen-render.js, served here as ./screen-render.js: one renderer for both pages),
// and as a collapsible tree of the JSON itself. Both use textContent only.

import { el } from "./ui.js";
import { renderScreen as draw, labelOf as label } from "./screen-render.js";

/** The tree as the demo page draws it (a detached element; buttons inert: a preview). */
export function renderScreen(node) {
  return draw(node, { headings: ["h3", "h4"] }).root;
}

const summaryOf = (value) => {
  if (Array.isArray(value)) return `[${value.length}]`;
  const type = typeof value.type === "string" ? value.type : "object";
  const id = typeof value.id === "string" ? ` #${value.id}` : "";
  const text = label(value);
  return `${type}${id}` + (text !== null ? ` “${text.length > 40 ? text.slice(0, 40) + "…" : text}”` : "");
};

/** The JSON as a tree of <details> (keyboard: Tab to a summary, Enter or Space opens it). */
export function treeView(value, key = null, depth = 0) {
  const name = key === null ? null : el("span", { className: "t-key" }, key + ": ");
  if (value === null || typeof value !== "object") {
    return el("div", { className: "t-leaf" }, name, el("span", { className: "t-" + (value === null ? "null" : typeof value) }, JSON.stringify(value)));
  }
  const entries = Array.isArray(value) ? value.map((child, i) => [String(i), child]) : Object.entries(value);
  return el("details", { className: "t-node", open: depth < 3 },
    el("summary", {}, name, el("span", { className: "t-summary" }, summaryOf(value))),
    el("div", { className: "t-children" }, entries.map(([childKey, child]) => treeView(child, childKey, depth + 1))));
}

const escapeToken = (token) => String(token).replace(/~/g, "~0").replace(/\//g, "~1");

/** Pretty-printed JSON as lines, each with the JSON Pointer of the value it belongs to. */
export function jsonLines(value) {
  const lines = [];
  const walk = (node, pointer, indent, prefix, comma) => {
    const pad = "  ".repeat(indent);
    if (node === null || typeof node !== "object") {
      lines.push({ pointer, text: pad + prefix + JSON.stringify(node) + comma });
      return;
    }
    const isArray = Array.isArray(node);
    const entries = isArray ? node.map((child, i) => [i, child]) : Object.keys(node).sort().map((k) => [k, node[k]]);
    if (!entries.length) {
      lines.push({ pointer, text: pad + prefix + (isArray ? "[]" : "{}") + comma });
      return;
    }
    lines.push({ pointer, text: pad + prefix + (isArray ? "[" : "{") });
    entries.forEach(([k, child], i) => {
      walk(child, pointer + "/" + escapeToken(k), indent + 1, isArray ? "" : JSON.stringify(k) + ": ", i < entries.length - 1 ? "," : "");
    });
    lines.push({ pointer, text: pad + (isArray ? "]" : "}") + comma, closing: true });
  };
  walk(value, "", 0, "", "");
  return lines;
}

/** Whether `pointer` is `path` or inside it. */
export const within = (pointer, path) => pointer === path || pointer.startsWith(path + "/");

/**
 * The two versions side by side, with the lines the ops touch marked: on the left what is
 * removed or replaced (and a move's source), on the right what is added, replaced or copied.
 */
export function sideBySide(fromTree, toTree, ops, { fromLabel, toLabel }) {
  const removed = [], added = [];
  for (const op of ops) {
    if (op.op === "remove" || op.op === "replace") removed.push(op.path);
    if (op.op === "move") removed.push(op.from);
    if (op.op === "add" || op.op === "replace" || op.op === "move" || op.op === "copy") added.push(op.path);
  }
  const pane = (tree, paths, kind, title) => {
    const lines = jsonLines(tree);
    let marked = 0;
    const code = el("code", {}, lines.map((line) => {
      const hit = paths.some((path) => within(line.pointer, path));
      if (hit && !line.closing) marked++;
      return el("span", { className: "line" + (hit ? " " + kind : "") }, line.text + "\n");
    }));
    return el("figure", { className: "pane", dataset: { marked: String(marked) } },
      el("figcaption", {}, title), el("pre", { tabIndex: 0, "aria-label": title }, code));
  };
  return el("div", { className: "side-by-side" },
    pane(fromTree, removed, "removed", fromLabel), pane(toTree, added, "added", toLabel));
}
