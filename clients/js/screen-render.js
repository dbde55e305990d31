// PushHub screen renderer: draws a server-driven screen tree as DOM elements, as the demo page
// and the console show it. Types: screen (title, children), text (text or label; style as a
// class), section (title, children), image (url or src, alt or caption), list (items: strings,
// {label} objects or components), button (label, action); any other type, or none, is a labelled
// box with its fields, so nothing published is hidden. Text goes in as textContent only; image
// URLs must be http(s) or data:image. Served by the hub at /v1/screen-render.js (and to the
// console); no dependencies. Elements carry the c-* classes the pages style.

function element(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

function safeURL(value) {
  if (typeof value !== "string") return null;
  try {
    const url = new URL(value, location.href);
    if (url.protocol === "http:" || url.protocol === "https:") return url.href;
    if (url.protocol === "data:" && /^data:image\//i.test(value)) return value;
  } catch {}
  return null;
}

/** What a node says: its text, label, title or name, whichever comes first. */
export function labelOf(node) {
  for (const key of ["text", "label", "title", "name"]) if (typeof node[key] === "string") return node[key];
  return null;
}

/**
 * Draws `tree`. Options:
 * - `previous`: the `elements` of the last call; a node object met again (the JavaScript client's
 *   trees are frozen and copy-on-write, so an unchanged subtree keeps its identity) reuses its
 *   element, so a patch redraws only what it changed;
 * - `onButton(node, button)`: called when a button is pressed; without it buttons are inert
 *   (not focusable, aria-disabled), as in a preview;
 * - `headings`: the tags of a screen's and a section's title (default ["h1", "h3"]).
 * Returns `{ root, elements, fresh }`: the root element, node → element for the next call, and
 * the elements built (not reused) this time.
 */
export function renderScreen(tree, { previous = null, onButton = null, headings = ["h1", "h3"] } = {}) {
  const elements = new WeakMap();
  const fresh = [];

  function draw(node) {
    if (node !== null && typeof node === "object") {
      const known = previous?.get(node);
      if (known && !elements.has(node)) {
        elements.set(node, known);
        return known;
      }
    }
    const built = build(node);
    if (node !== null && typeof node === "object") elements.set(node, built);
    fresh.push(built);
    return built;
  }

  function children(node, parent) {
    if (Array.isArray(node.children)) for (const child of node.children) parent.append(draw(child));
    return parent;
  }

  function build(node) {
    if (node === null || typeof node !== "object" || Array.isArray(node)) {
      return element("pre", "c-unknown mono", JSON.stringify(node));
    }
    switch (node.type) {
      case "screen": {
        const box = element("div", "c-screen");
        if (typeof node.title === "string") box.append(element(headings[0], "", node.title));
        return children(node, box);
      }
      case "text":
        return element("p", "c-text" + (typeof node.style === "string" ? " " + node.style : ""), labelOf(node) ?? "");
      case "section": {
        const box = element("section", "c-section");
        if (typeof node.title === "string") box.append(element(headings[1], "", node.title));
        return children(node, box);
      }
      case "image": {
        const figure = element("figure", "c-image");
        const src = safeURL(node.url ?? node.src);
        const caption = node.alt ?? node.caption ?? (src ? "" : "image: " + String(node.url ?? node.src ?? "(no url)"));
        if (src) figure.append(Object.assign(document.createElement("img"), { src, alt: node.alt ?? "" }));
        if (caption) figure.append(element("figcaption", "", caption));
        return figure;
      }
      case "list": {
        const list = element("ul", "c-list");
        for (const entry of Array.isArray(node.items) ? node.items : []) {
          const item = element("li");
          if (entry !== null && typeof entry === "object" && typeof entry.type === "string") item.append(draw(entry));
          else item.textContent = entry !== null && typeof entry === "object" ? labelOf(entry) ?? JSON.stringify(entry) : String(entry);
          list.append(item);
        }
        return list;
      }
      case "button": {
        const button = element("button", "c-button", labelOf(node) ?? "Button");
        button.type = "button";
        if (node.action !== undefined) button.title = "action: " + JSON.stringify(node.action);
        if (onButton) {
          button.addEventListener("click", () => onButton(node, button));
        } else {
          button.tabIndex = -1;
          button.setAttribute("aria-disabled", "true");
        }
        return button;
      }
      default: {
        const box = element("div", "c-unknown");
        box.append(element("div", "label", typeof node.type === "string" ? node.type : "no type"));
        const { children: _children, type: _type, ...fields } = node;
        if (Object.keys(fields).length) box.append(element("pre", "mono", JSON.stringify(fields)));
        return children(node, box);
      }
    }
  }

  const root = draw(tree);
  return { root, elements, fresh };
}
