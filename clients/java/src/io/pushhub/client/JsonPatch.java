package io.pushhub.client;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * RFC 6902 JSON Patch: add, remove, replace, move, copy and test, applied in order.
 *
 * <p>Invariants: {@link #apply} is all-or-nothing (the document is immutable: a failed patch
 * leaves nothing half done) and copy-on-write: only the containers on the paths the operations
 * touch are new, every other subtree of the result is the document's own (same instance).
 */
public final class JsonPatch {
    private JsonPatch() {}

    /**
     * Applies {@code operations} (a JSON array of RFC 6902 operations) to {@code document} and
     * returns the result; a malformed operation, a missing path or a failed {@code test} is a
     * {@link JsonException} naming the operation's index.
     */
    public static Json apply(Json document, Json operations) throws JsonException {
        Objects.requireNonNull(document, "document");
        if (operations.kind() != Json.Kind.ARRAY) throw new JsonException("a JSON Patch is an array of operations");
        Json result = document;
        List<Json> ops = operations.items();
        for (int i = 0; i < ops.size(); i++) {
            try {
                result = applyOne(result, ops.get(i));
            } catch (JsonException e) {
                throw new JsonException("patch operation " + i + ": " + e.getMessage());
            }
        }
        return result;
    }

    private static Json applyOne(Json document, Json op) {
        if (op.kind() != Json.Kind.OBJECT) throw new JsonException("an operation is a JSON object");
        Json name = op.get("op");
        if (name == null || name.kind() != Json.Kind.STRING) throw new JsonException("\"op\" must be a string");
        JsonPointer path = pointer(op, "path");
        switch (name.asString()) {
            case "add": return add(document, path, value(op));
            case "remove": return remove(document, path);
            case "replace": return replace(document, path, value(op));
            case "move": {
                JsonPointer from = pointer(op, "from");
                if (path.isInside(from)) throw new JsonException("cannot move " + from + " into its own child " + path);
                Json moved = valueAt(document, from);
                return from.equals(path) ? document : add(remove(document, from), path, moved);
            }
            case "copy": return add(document, path, valueAt(document, pointer(op, "from")));
            case "test": {
                Json found = valueAt(document, path);
                Json expected = value(op);
                if (!found.equals(expected)) {
                    throw new JsonException(
                            "test failed at \"" + path + "\": " + brief(found) + " is not " + brief(expected));
                }
                return document;
            }
            default:
                throw new JsonException(
                        "unknown op \"" + name.asString() + "\"; expected add, remove, replace, move, copy or test");
        }
    }

    /** A value's compact text for a message, cut after 100 chars. */
    private static String brief(Json value) {
        String text = value.toString();
        return text.length() <= 100 ? text : text.substring(0, 100) + "…";
    }

    private static JsonPointer pointer(Json op, String field) {
        Json text = op.get(field);
        if (text == null || text.kind() != Json.Kind.STRING) {
            throw new JsonException("\"" + field + "\" must be a JSON Pointer string");
        }
        return JsonPointer.parse(text.asString());
    }

    private static Json value(Json op) {
        Json value = op.get("value");
        if (value == null) throw new JsonException("\"value\" is missing");
        return value;
    }

    // ---- The three edits, each a change to the container holding the path's last token

    /** RFC 6902 §4.1: an object member is set (added or replaced); an array item is inserted ("-": appended). */
    static Json add(Json document, JsonPointer path, Json value) {
        if (path.isRoot()) return value;
        return edit(document, path, 0, (parent, token) -> {
            switch (parent.kind()) {
                case OBJECT:
                    return Json.ownedObject(parent.memberTable().with(token, value));
                case ARRAY: {
                    int index = JsonPointer.arrayIndex(token, parent.size(), true);
                    ArrayList<Json> items = copyItems(parent, 1);
                    items.add(index, value);
                    return Json.ownedArray(items);
                }
                default: throw notContainer(parent, path);
            }
        });
    }

    /** RFC 6902 §4.2: the value must exist; the whole document cannot be removed. */
    static Json remove(Json document, JsonPointer path) {
        if (path.isRoot()) throw new JsonException("cannot remove the whole document");
        return edit(document, path, 0, (parent, token) -> {
            switch (parent.kind()) {
                case OBJECT:
                    return Json.ownedObject(parent.memberTable().without(memberIndex(parent, token, path)));
                case ARRAY: {
                    int index = JsonPointer.arrayIndex(token, parent.size(), false);
                    ArrayList<Json> items = copyItems(parent, 0);
                    items.remove(index);
                    return Json.ownedArray(items);
                }
                default: throw notContainer(parent, path);
            }
        });
    }

    /** RFC 6902 §4.3: the value must exist; it is replaced in place (an object member keeps its position). */
    static Json replace(Json document, JsonPointer path, Json value) {
        if (path.isRoot()) return value;
        return edit(document, path, 0, (parent, token) -> withChild(parent, token, value, path));
    }

    /** The value {@code path} names; it must exist. */
    static Json valueAt(Json document, JsonPointer path) {
        Json node = document;
        for (int i = 0; i < path.size(); i++) node = child(node, path.token(i), path);
        return node;
    }

    /** A change to the container that holds a path's last token: returns the changed container. */
    private interface ParentEdit {
        Json apply(Json parent, String token);
    }

    /**
     * Applies {@code edit} at the end of {@code path} below {@code node} (which is at token
     * {@code depth}), copying the containers on the way.
     */
    private static Json edit(Json node, JsonPointer path, int depth, ParentEdit edit) {
        String token = path.token(depth);
        if (depth == path.size() - 1) return edit.apply(node, token);
        Json changed = edit(child(node, token, path), path, depth + 1, edit);
        return withChild(node, token, changed, path);
    }

    /** {@code node} with its existing child {@code token} replaced by {@code value}. */
    private static Json withChild(Json node, String token, Json value, JsonPointer path) {
        switch (node.kind()) {
            case OBJECT:
                return Json.ownedObject(node.memberTable().replacing(memberIndex(node, token, path), value));
            case ARRAY: {
                int index = JsonPointer.arrayIndex(token, node.size(), false);
                ArrayList<Json> items = copyItems(node, 0);
                items.set(index, value);
                return Json.ownedArray(items);
            }
            default: throw notContainer(node, path);
        }
    }

    private static Json child(Json node, String token, JsonPointer path) {
        switch (node.kind()) {
            case OBJECT: return node.memberTable().value(memberIndex(node, token, path));
            case ARRAY: return node.get(JsonPointer.arrayIndex(token, node.size(), false));
            default: throw notContainer(node, path);
        }
    }

    /** The position of the existing member {@code token} of {@code object}. */
    private static int memberIndex(Json object, String token, JsonPointer path) {
        int i = object.memberTable().indexOf(token);
        if (i < 0) throw new JsonException("no member \"" + token + "\" (path \"" + path + "\")");
        return i;
    }

    private static JsonException notContainer(Json node, JsonPointer path) {
        return new JsonException("cannot descend into a " + node.typeName() + " (path \"" + path + "\")");
    }

    private static ArrayList<Json> copyItems(Json array, int extra) {
        ArrayList<Json> items = new ArrayList<>(array.size() + extra);
        items.addAll(array.items());
        return items;
    }
}
