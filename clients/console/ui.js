// Small DOM helpers shared by the views. Text goes in with textContent only (published trees and
// ids are data, never markup); every input is created with its label.

let nextId = 0;

/** An element: `el("button", { className: "primary", onclick }, "Save")`. */
export function el(tag, properties = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(properties ?? {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "dataset") Object.assign(node.dataset, value);
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else if (key.startsWith("aria-") || key === "role" || key === "for" || key === "list") node.setAttribute(key, value === true ? "true" : String(value));
    else node[key] = value;
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    node.append(child instanceof Node ? child : String(child));
  }
  return node;
}

export const uid = (prefix) => `${prefix}-${++nextId}`;

/**
 * A labelled control: `field("Platform", el("input", …), { hint, name })` → the wrapper, with
 * `.control` and `.message` (where a validation message from the hub goes, tied to the control
 * with aria-describedby).
 */
export function field(labelText, control, { hint, name, className } = {}) {
  control.id ||= uid("f");
  const message = el("p", { className: "field-message", id: uid("m"), "aria-live": "polite" });
  const described = [message.id];
  const parts = [el("label", { for: control.id }, labelText), control];
  if (hint) {
    const hintNode = el("p", { className: "hint", id: uid("h") }, hint);
    described.push(hintNode.id);
    parts.push(hintNode);
  }
  parts.push(message);
  control.setAttribute("aria-describedby", described.join(" "));
  const wrapper = el("div", { className: "field" + (className ? " " + className : ""), dataset: name ? { field: name } : {} }, parts);
  wrapper.control = control;
  wrapper.message = message;
  return wrapper;
}

/** Shows (or clears, with null) a message at a field made by `field`. */
export function setFieldMessage(wrapper, text) {
  wrapper.message.textContent = text ?? "";
  if (text) wrapper.control.setAttribute("aria-invalid", "true");
  else wrapper.control.removeAttribute("aria-invalid");
}

export const input = (properties = {}) => el("input", { type: "text", autocomplete: "off", spellcheck: false, ...properties });

export function select(options, properties = {}) {
  return el("select", properties, options.map((option) => {
    const [value, text] = Array.isArray(option) ? option : [option, option];
    return el("option", { value }, text);
  }));
}

/** A button that a token without `scope` cannot use: disabled, with the reason beside it. */
export function actionButton(text, { scope, can, onclick, className = "" } = {}) {
  const allowed = !scope || can(scope);
  const button = el("button", { type: "button", className, onclick, disabled: !allowed }, text);
  if (!allowed) {
    button.title = `needs the ${scope} scope`;
    button.dataset.needs = scope;
  }
  return button;
}

/** A line of status text for the result of an action (polite live region). */
export function statusLine() {
  const line = el("p", { className: "status", role: "status", "aria-live": "polite" });
  line.show = (text, kind = "") => {
    line.textContent = text ?? "";
    line.dataset.kind = kind;
  };
  return line;
}

/** Asks before a change: a modal <dialog> stating what will happen; resolves true on confirm. */
export function confirmAction({ title, body, confirm = "Confirm", danger = false }) {
  return new Promise((resolve) => {
    const yes = el("button", { type: "button", className: danger ? "danger" : "primary", dataset: { confirm: "yes" } }, confirm);
    const no = el("button", { type: "button", dataset: { confirm: "no" } }, "Cancel");
    const headingId = uid("d");
    const dialog = el("dialog", { className: "confirm", "aria-labelledby": headingId },
      el("h2", { id: headingId }, title),
      ...(Array.isArray(body) ? body : [body]).map((line) => el("p", {}, line)),
      el("div", { className: "actions" }, no, yes));
    const before = document.activeElement;
    const finish = (answer) => {
      dialog.close();
      dialog.remove();
      if (before?.isConnected) before.focus();  // back where the operator was
      resolve(answer);
    };
    yes.addEventListener("click", () => finish(true));
    no.addEventListener("click", () => finish(false));
    dialog.addEventListener("cancel", (event) => { event.preventDefault(); finish(false); });
    document.body.append(dialog);
    dialog.showModal();
    no.focus();
  });
}

export const number = (value) => (typeof value === "number" ? value.toLocaleString("en-US") : "–");

export function when(milliseconds) {
  if (!milliseconds) return "–";
  const date = new Date(milliseconds);
  return date.toISOString().replace("T", " ").slice(0, 19) + " UTC";
}

export function bytes(count) {
  if (typeof count !== "number") return "–";
  const units = ["B", "KiB", "MiB", "GiB"];
  let value = count, unit = 0;
  while (value >= 1024 && unit < units.length - 1) { value /= 1024; unit++; }
  return value.toFixed(unit ? 1 : 0) + " " + units[unit];
}

/** A table: `table(["Name", "Version"], rows)` where each row is an array of cells (nodes or text). */
export function table(headings, rows, { caption, className = "" } = {}) {
  return el("table", { className },
    caption ? el("caption", {}, caption) : null,
    el("thead", {}, el("tr", {}, headings.map((heading) => el("th", { scope: "col" }, heading)))),
    el("tbody", {}, rows.map((row) => el("tr", {}, row.map((cell, i) => i === 0 && cell?.scopeRow ? el("th", { scope: "row" }, cell.node) : el("td", {}, cell))))));
}

export function section(title, ...children) {
  const headingId = uid("s");
  return el("section", { className: "panel", "aria-labelledby": headingId }, el("h2", { id: headingId }, title), ...children);
}

/** Runs `task` every `ms` until the returned stop function is called (the view changes). */
export function every(ms, task) {
  let stopped = false, timer = null;
  const run = async () => {
    if (stopped) return;
    try { await task(); } catch (error) { console.warn(error); }
    if (!stopped) timer = setTimeout(run, ms);
  };
  run();
  return () => { stopped = true; clearTimeout(timer); };
}

export function debounce(ms, task) {
  let timer = null;
  return (...args) => {
    clearTimeout(timer);
    timer = setTimeout(() => task(...args), ms);
  };
}

const shown = new WeakMap();

/**
 * Replaces `container`'s content with `build()` only when `data` differs from what it last
 * showed: a poll that finds nothing new keeps the elements, so keyboard focus stays where it was
 * and a live region stays quiet.
 */
export function showIfChanged(container, data, build) {
  const key = JSON.stringify(data);
  if (shown.get(container) === key) return false;
  shown.set(container, key);
  const content = build();
  container.replaceChildren(...(Array.isArray(content) ? content : [content]));
  return true;
}
