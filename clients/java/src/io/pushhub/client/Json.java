package io.pushhub.client;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * A JSON value (RFC 8259) as I-JSON (RFC 7493) has it: numbers are finite IEEE 754 doubles,
 * strings and member names hold whole Unicode characters (no lone surrogates), member names are
 * unique. Immutable, hence safe to share between threads and between trees: a patched tree
 * shares every subtree the patch did not touch.
 *
 * <p>Equality is structural: object member order is ignored, numbers compare by value ({@code -0
 * == 0}), strings by their UTF-16 code units (which, without lone surrogates, are their
 * characters). Equal values have the same {@link #canonical()} form, hence the same screen hash.
 *
 * <p>Objects keep their members in the order they were given or parsed; {@link #toString()}
 * writes that order, {@link #canonical()} the RFC 8785 order.
 */
public final class Json {
    /** The six JSON types. */
    public enum Kind { NULL, BOOLEAN, NUMBER, STRING, ARRAY, OBJECT }

    public static final Json NULL = new Json(Kind.NULL, false, 0, null, null, null);
    public static final Json TRUE = new Json(Kind.BOOLEAN, true, 0, null, null, null);
    public static final Json FALSE = new Json(Kind.BOOLEAN, false, 0, null, null, null);

    private static final Json EMPTY_ARRAY = ownedArray(new ArrayList<>(0));
    private static final Json EMPTY_OBJECT = ownedObject(Members.EMPTY);

    private final Kind kind;
    private final boolean bool;
    private final double number;
    private final String string;
    /** For ARRAY: an unmodifiable view of a list no one else holds; otherwise null. */
    private final List<Json> items;
    /** For OBJECT: its members (immutable); otherwise null. */
    private final Members members;
    /**
     * For a container: its canonical UTF-8 when {@link JsonWriter} chose to keep it, else null.
     * It depends on the value alone, which never changes, so it is right for every tree that
     * shares this subtree; a race writes the same bytes twice, harmlessly (volatile: published whole).
     */
    private volatile byte[] canonicalForm;

    private Json(Kind kind, boolean bool, double number, String string, List<Json> items, Members members) {
        this.kind = kind;
        this.bool = bool;
        this.number = number;
        this.string = string;
        this.items = items;
        this.members = members;
    }

    // ---- Building values

    public static Json of(boolean b) {
        return b ? TRUE : FALSE;
    }

    /** A number; NaN and infinities have no JSON form ({@link IllegalArgumentException}). */
    public static Json of(double d) {
        if (!Double.isFinite(d)) throw new IllegalArgumentException(d + " has no JSON form");
        return new Json(Kind.NUMBER, false, d, null, null, null);
    }

    /** A string; a lone surrogate is refused ({@link IllegalArgumentException}), as I-JSON does. */
    public static Json of(String s) {
        return ownedString(checkedText(s));
    }

    /** An array of the items (copied; a null item is a {@link NullPointerException}). */
    public static Json array(List<Json> items) {
        ArrayList<Json> copy = new ArrayList<>(items.size());
        for (Json item : items) copy.add(Objects.requireNonNull(item, "a JSON array item is null; use Json.NULL"));
        return ownedArray(copy);
    }

    /** An object of the members (copied, in the map's iteration order; null names or values are refused). */
    public static Json object(Map<String, Json> members) {
        Members.Builder copy = new Members.Builder(members.size());
        for (Map.Entry<String, Json> member : members.entrySet()) {
            String name = checkedText(member.getKey());
            Json value = member.getValue();
            copy.add(name, Objects.requireNonNull(value, () -> "member \"" + name + "\" is null; use Json.NULL"));
        }
        return ownedObject(copy.build());
    }

    /** Reads one JSON text: strict RFC 8259 and I-JSON, nesting at most 256 deep (see {@link JsonReader}). */
    public static Json parse(String text) throws JsonException {
        return JsonReader.parse(text);
    }

    /**
     * {@link #parse(String)} with another nesting limit: {@link JsonReader#HUB_MAX_DEPTH} for hub
     * messages, fetch answers and stored screens (a tree the hub accepted, wrapped).
     */
    static Json parse(String text, int maxDepth) throws JsonException {
        return JsonReader.parse(text, maxDepth);
    }

    // ---- Package-private constructors that take ownership (no copy, no checks): the reader and patch use them

    /** A string the caller has checked for lone surrogates. */
    static Json ownedString(String s) {
        return new Json(Kind.STRING, false, 0, s, null, null);
    }

    /** An array over {@code list}, which the caller gives up (never changes it again). */
    static Json ownedArray(ArrayList<Json> list) {
        return new Json(Kind.ARRAY, false, 0, null, Collections.unmodifiableList(list), null);
    }

    /** An object of {@code members}. */
    static Json ownedObject(Members members) {
        return new Json(Kind.OBJECT, false, 0, null, null, members);
    }

    /** An object of the map's members, whose names and values the caller has checked (copied). */
    static Json ownedObject(LinkedHashMap<String, Json> map) {
        Members.Builder copy = new Members.Builder(map.size());
        for (Map.Entry<String, Json> member : map.entrySet()) copy.add(member.getKey(), member.getValue());
        return ownedObject(copy.build());
    }

    static Json emptyArray() {
        return EMPTY_ARRAY;
    }

    static Json emptyObject() {
        return EMPTY_OBJECT;
    }

    /** A HashMap capacity that holds {@code size} entries without rehashing. */
    static int capacityFor(int size) {
        return size < 3 ? size + 1 : (int) (size / 0.75f) + 1;
    }

    private static String checkedText(String s) {
        Objects.requireNonNull(s, "a JSON string is null; use Json.NULL");
        int bad = loneSurrogateAt(s);
        if (bad >= 0) {
            throw new IllegalArgumentException("a lone surrogate at index " + bad + " is not a character (I-JSON)");
        }
        return s;
    }

    /** The index of the first lone surrogate in {@code s}, or -1. */
    static int loneSurrogateAt(String s) {
        for (int i = 0, n = s.length(); i < n; i++) {
            char c = s.charAt(i);
            if (!Character.isSurrogate(c)) continue;
            if (Character.isHighSurrogate(c) && i + 1 < n && Character.isLowSurrogate(s.charAt(i + 1))) {
                i++;
            } else {
                return i;
            }
        }
        return -1;
    }

    // ---- Reading values

    public Kind kind() {
        return kind;
    }

    public boolean isNull() {
        return kind == Kind.NULL;
    }

    /** The boolean; any other kind is an {@link IllegalStateException}. */
    public boolean asBoolean() {
        expect(Kind.BOOLEAN);
        return bool;
    }

    /** The number; any other kind is an {@link IllegalStateException}. */
    public double asDouble() {
        expect(Kind.NUMBER);
        return number;
    }

    /**
     * The number as a long when it is an integer a long holds exactly; a fraction, a number out of
     * long's range or another kind is an {@link IllegalStateException}.
     */
    public long asLong() {
        expect(Kind.NUMBER);
        // 2^63 is exactly representable; every double below it in magnitude that has no fraction fits a long.
        if (number != Math.rint(number) || number >= 0x1p63 || number < -0x1p63) {
            throw new IllegalStateException(EcmaNumber.format(number) + " is not an integer a long holds");
        }
        return (long) number;
    }

    /** The string; any other kind is an {@link IllegalStateException}. */
    public String asString() {
        expect(Kind.STRING);
        return string;
    }

    /** The number of array items or object members; 0 for every other kind. */
    public int size() {
        switch (kind) {
            case ARRAY: return items.size();
            case OBJECT: return members.count();
            default: return 0;
        }
    }

    /** The array item at {@code index}, or null when out of range or not an array. */
    public Json get(int index) {
        return kind == Kind.ARRAY && index >= 0 && index < items.size() ? items.get(index) : null;
    }

    /** The object member named {@code key}, or null when absent or not an object. */
    public Json get(String key) {
        return kind == Kind.OBJECT ? members.get(key) : null;
    }

    /** The array's items (unmodifiable); empty for every other kind. */
    public List<Json> items() {
        return kind == Kind.ARRAY ? items : Collections.emptyList();
    }

    /** The object's members (unmodifiable, in stored order); empty for every other kind. */
    public Map<String, Json> members() {
        return kind == Kind.OBJECT ? members : Collections.emptyMap();
    }

    /** The canonical UTF-8 kept by {@link JsonWriter}, or null; the caller must not change it. */
    byte[] canonicalForm() {
        return canonicalForm;
    }

    void keepCanonicalForm(byte[] form) {
        canonicalForm = form;
    }

    /** The object's members as a table (for the reader, the writer and patches); null for every other kind. */
    Members memberTable() {
        return members;
    }

    /** Arrays and objects. */
    boolean isContainer() {
        return kind == Kind.ARRAY || kind == Kind.OBJECT;
    }

    private void expect(Kind wanted) {
        if (kind != wanted) {
            throw new IllegalStateException("expected a JSON " + name(wanted) + ", found " + typeName());
        }
    }

    /** The JSON type name, for messages ("object", "array", "string", "number", "boolean", "null"). */
    String typeName() {
        return name(kind);
    }

    private static String name(Kind kind) {
        return kind.name().toLowerCase(java.util.Locale.ROOT);
    }

    // ---- Writing

    /** Compact JSON text (no whitespace), members in stored order, numbers and strings as in {@link #canonical()}. */
    @Override
    public String toString() {
        return JsonWriter.compact(this);
    }

    /** The RFC 8785 (JCS) canonical form: what the screen hash is computed over. */
    public String canonical() {
        return JsonWriter.canonical(this);
    }

    // ---- Equality

    @Override
    public boolean equals(Object other) {
        if (this == other) return true;
        if (!(other instanceof Json)) return false;
        Json that = (Json) other;
        if (kind != that.kind) return false;
        switch (kind) {
            case NULL: return true;
            case BOOLEAN: return bool == that.bool;
            case NUMBER: return number == that.number;
            case STRING: return string.equals(that.string);
            case ARRAY: return items.equals(that.items);
            case OBJECT: return members.equals(that.members);
            default: throw new AssertionError(kind);
        }
    }

    @Override
    public int hashCode() {
        switch (kind) {
            case NULL: return 0;
            case BOOLEAN: return bool ? 1231 : 1237;
            case NUMBER: return number == 0 ? 0 : Double.hashCode(number);
            case STRING: return string.hashCode();
            case ARRAY: return items.hashCode();
            case OBJECT: return members.hashCode();
            default: throw new AssertionError(kind);
        }
    }
}
