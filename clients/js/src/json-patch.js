// RFC 6901 JSON Pointer and RFC 6902 JSON Patch, applied copy-on-write (DESIGN §4: the hub's
// patches apply with any conformant library; this one keeps unchanged subtrees shared).

/** `Object.prototype.hasOwnProperty`, for objects parsed from JSON (a "__proto__" member is an ordinary key). */
export const hasOwn = Object.prototype.hasOwnProperty;

/** A patch that cannot be applied to the tree the client holds (RFC 6902 §5: the whole patch fails). */
export class PatchError extends Error {
  constructor(message, op) {
    super(message);
    this.name = "PatchError";
    this.op = op;
  }
}

/** Splits an RFC 6901 pointer into reference tokens ("~1" is "/", then "~0" is "~"). */
export function parsePointer(pointer) {
  if (pointer === "") return [];
  if (typeof pointer !== "string" || pointer[0] !== "/") {
    throw new PatchError(`${JSON.stringify(pointer)} is not a JSON Pointer (RFC 6901: "" or starting with "/")`);
  }
  if (/~(?![01])/.test(pointer)) throw new PatchError(`${JSON.stringify(pointer)} has a "~" not followed by 0 or 1`);
  return pointer.slice(1).split("/").map((t) => (t.indexOf("~") < 0 ? t : t.replace(/~1/g, "/").replace(/~0/g, "~")));
}

function isContainer(value) {
  return value !== null && typeof value === "object";
}

/** An array index token (RFC 6901 §4: digits without a leading zero) as a number, checked against `limit`. */
function arrayIndex(array, token, limit, op) {
  if (!/^(0|[1-9][0-9]*)$/.test(token)) throw new PatchError(`"${token}" is not an array index`, op);
  const index = Number(token);
  if (index > limit) throw new PatchError(`index ${index} is out of range (array length ${array.length})`, op);
  return index;
}

/** Sets a member without invoking setters: "__proto__" is an ordinary key in JSON. */
function setMember(object, key, value) {
  if (key === "__proto__") {
    Object.defineProperty(object, key, { value, writable: true, enumerable: true, configurable: true });
  } else {
    object[key] = value;
  }
}

function child(node, token, op) {
  if (Array.isArray(node)) return node[arrayIndex(node, token, node.length - 1, op)];
  if (isContainer(node) && hasOwn.call(node, token)) return node[token];
  throw new PatchError(`no member "${token}" at ${JSON.stringify(op && (op.from ?? op.path))}`, op);
}

function valueAt(root, tokens, op) {
  let node = root;
  for (const token of tokens) node = child(node, token, op);
  return node;
}

function cloneJSON(value) {
  if (!isContainer(value)) return value;
  if (Array.isArray(value)) return value.map(cloneJSON);
  const copy = {};
  for (const key of Object.keys(value)) setMember(copy, key, cloneJSON(value[key]));
  return copy;
}

/** JSON equality for the `test` op: numbers by value, objects by their member sets. */
export function jsonEqual(a, b) {
  if (a === b) return true;
  if (!isContainer(a) || !isContainer(b) || Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) return a.length === b.length && a.every((v, i) => jsonEqual(v, b[i]));
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  return keys.every((k) => hasOwn.call(b, k) && jsonEqual(a[k], b[k]));
}

/**
 * Applies an RFC 6902 patch and returns the new document; `document` is not modified.
 * Copy-on-write: only the containers on the paths the ops touch are copied, every other subtree
 * is shared with `document` (so a UI can skip what kept its identity). Throws `PatchError`.
 */
export function applyPatch(document, ops) {
  if (!Array.isArray(ops)) throw new PatchError("a JSON Patch is an array of operations");
  const fresh = new Set(); // containers this call copied: safe to mutate
  let root = document;
  const own = (container) => {
    if (fresh.has(container)) return container;
    const copy = Array.isArray(container) ? container.slice() : { ...container };
    fresh.add(copy);
    return copy;
  };
  // The container that holds the last token of `tokens`, copied (with its ancestors) if needed.
  const parentFor = (tokens, op) => {
    if (!isContainer(root)) throw new PatchError(`the document is not a container`, op);
    root = own(root);
    let node = root;
    for (let i = 0; i < tokens.length - 1; i++) {
      const original = child(node, tokens[i], op);
      if (!isContainer(original)) throw new PatchError(`"${tokens[i]}" is not an object or array`, op);
      const copy = own(original);
      if (copy !== original) {
        if (Array.isArray(node)) node[Number(tokens[i])] = copy;
        else setMember(node, tokens[i], copy);
      }
      node = copy;
    }
    return node;
  };
  const add = (tokens, value, op) => {
    if (tokens.length === 0) return void (root = value);
    const parent = parentFor(tokens, op);
    const last = tokens[tokens.length - 1];
    if (Array.isArray(parent)) {
      if (last === "-") parent.push(value);
      else parent.splice(arrayIndex(parent, last, parent.length, op), 0, value);
    } else {
      setMember(parent, last, value);
    }
  };
  const remove = (tokens, op) => {
    if (tokens.length === 0) throw new PatchError("cannot remove the whole document", op);
    const parent = parentFor(tokens, op);
    const last = tokens[tokens.length - 1];
    const value = child(parent, last, op);
    if (Array.isArray(parent)) parent.splice(Number(last), 1);
    else delete parent[last];
    return value;
  };
  for (const op of ops) {
    if (!isContainer(op) || typeof op.path !== "string") throw new PatchError("an operation needs a string path", op);
    const path = parsePointer(op.path);
    switch (op.op) {
      case "add":
        if (!hasOwn.call(op, "value")) throw new PatchError("add needs a value", op);
        add(path, op.value, op);
        break;
      case "remove":
        remove(path, op);
        break;
      case "replace":
        if (!hasOwn.call(op, "value")) throw new PatchError("replace needs a value", op);
        if (path.length === 0) {
          root = op.value;
        } else {
          const parent = parentFor(path, op);
          const last = path[path.length - 1];
          child(parent, last, op); // must exist
          if (Array.isArray(parent)) parent[Number(last)] = op.value;
          else setMember(parent, last, op.value);
        }
        break;
      case "move": {
        if (typeof op.from !== "string") throw new PatchError("move needs a string from", op);
        const from = parsePointer(op.from);
        if (op.path.startsWith(op.from + "/")) throw new PatchError("cannot move a value into one of its children", op);
        if (op.from === op.path) {
          valueAt(root, from, op);
          break;
        }
        add(path, remove(from, op), op);
        break;
      }
      case "copy":
        if (typeof op.from !== "string") throw new PatchError("copy needs a string from", op);
        add(path, cloneJSON(valueAt(root, parsePointer(op.from), op)), op);
        break;
      case "test":
        if (!jsonEqual(valueAt(root, path, op), op.value)) throw new PatchError(`test failed at ${op.path}`, op);
        break;
      default:
        throw new PatchError(`unknown op ${JSON.stringify(op.op)}`, op);
    }
  }
  return root;
}
