package io.pushhub.client;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;

/**
 * Writes a {@link Json} as UTF-8 JSON text with no whitespace, in one of two member orders:
 * <ul>
 *   <li>canonical: RFC 8785 (JCS), members sorted by the UTF-16 code units of their names
 *       ({@link String#compareTo} is exactly that order); the screen hash's input;</li>
 *   <li>compact: members in stored order, for messages.</li>
 * </ul>
 * Both write numbers as ECMAScript does ({@link EcmaNumber}) and strings with RFC 8785's minimal
 * escapes: {@code \"} and {@code \\}, control characters as {@code \b \t \n \f \r} or
 * <code>&#92;u00xx</code> (lowercase hex), everything else (U+2028, U+007F, non-BMP characters) raw.
 *
 * <p>The canonical writer keeps the form of some containers in them ({@link Json#canonicalForm()})
 * and copies it the next time: the containers of at least {@link #KEEP_BYTES} none of whose
 * children is that large (the "frontier"). Kept subtrees are disjoint, so the forms kept take at
 * most the size of the tree's own form; a patched tree shares its untouched subtrees, and with
 * them their forms, so checking its hash rewrites only the containers on the patched paths (and
 * the frontier containers there), then copies bytes and hashes them.
 *
 * <p>Invariant: {@code Json.parse(text).equals(value)} for the text written from every value.
 * A writer is single-use and not shared between threads.
 */
final class JsonWriter {
    private static final byte[] HEX = "0123456789abcdef".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] NULL = {'n', 'u', 'l', 'l'};
    private static final byte[] TRUE = {'t', 'r', 'u', 'e'};
    private static final byte[] FALSE = {'f', 'a', 'l', 's', 'e'};

    /** The size from which a container without such large children keeps its canonical form. */
    static final int KEEP_BYTES = 1024;

    private final boolean sortsMembers;
    private byte[] bytes;
    private int size;

    private JsonWriter(boolean sortsMembers, int capacity) {
        this.sortsMembers = sortsMembers;
        this.bytes = new byte[capacity];
    }

    /** The RFC 8785 text of {@code value}. */
    static String canonical(Json value) {
        return canonicalUtf8(value).text();
    }

    /** The RFC 8785 UTF-8 bytes of {@code value}: read them with {@link #buffer()} and {@link #size()}. */
    static JsonWriter canonicalUtf8(Json value) {
        JsonWriter writer = new JsonWriter(true, 1024);
        writer.write(value);
        return writer;
    }

    /** Compact text of {@code value}, members in stored order. */
    static String compact(Json value) {
        JsonWriter writer = new JsonWriter(false, 128);
        writer.write(value);
        return writer.text();
    }

    /** The written bytes are {@code buffer()[0 ..< size()]}. */
    byte[] buffer() {
        return bytes;
    }

    int size() {
        return size;
    }

    String text() {
        return new String(bytes, 0, size, StandardCharsets.UTF_8);
    }

    private void ensure(int extra) {
        if (size + extra > bytes.length) bytes = Arrays.copyOf(bytes, Math.max(bytes.length * 2, size + extra));
    }

    private void append(byte b) {
        ensure(1);
        bytes[size++] = b;
    }

    private void append(byte[] literal) {
        ensure(literal.length);
        System.arraycopy(literal, 0, bytes, size, literal.length);
        size += literal.length;
    }

    private void write(Json value) {
        switch (value.kind()) {
            case NULL: append(NULL); break;
            case BOOLEAN: append(value.asBoolean() ? TRUE : FALSE); break;
            case NUMBER: number(value.asDouble()); break;
            case STRING: string(value.asString()); break;
            case ARRAY: array(value); break;
            case OBJECT: object(value); break;
            default: throw new AssertionError(value.kind());
        }
    }

    /** Copies the container's kept canonical form if it has one (canonical writer only). */
    private boolean copiedKeptForm(Json container) {
        if (!sortsMembers) return false;
        byte[] kept = container.canonicalForm();
        if (kept == null) return false;
        append(kept);
        return true;
    }

    /** Keeps the form just written from {@code start} in {@code container} if it is on the frontier (see above). */
    private void keepIfFrontier(Json container, int start, boolean hasLargeChild) {
        if (sortsMembers && !hasLargeChild && size - start >= KEEP_BYTES) {
            container.keepCanonicalForm(Arrays.copyOfRange(bytes, start, size));
        }
    }

    /** Writes {@code value}; whether its form is at least {@link #KEEP_BYTES} long. */
    private boolean writeMeasured(Json value) {
        int start = size;
        write(value);
        return size - start >= KEEP_BYTES;
    }

    private void array(Json array) {
        if (copiedKeptForm(array)) return;
        int start = size;
        boolean hasLargeChild = false;
        List<Json> items = array.items();
        append((byte) '[');
        for (int i = 0, n = items.size(); i < n; i++) {
            if (i > 0) append((byte) ',');
            hasLargeChild |= writeMeasured(items.get(i));
        }
        append((byte) ']');
        keepIfFrontier(array, start, hasLargeChild);
    }

    private void object(Json object) {
        if (copiedKeptForm(object)) return;
        int start = size;
        boolean hasLargeChild = false;
        Members members = object.memberTable();
        int[] order = sortsMembers ? canonicalOrder(members) : null;
        append((byte) '{');
        for (int i = 0, n = members.count(); i < n; i++) {
            if (i > 0) append((byte) ',');
            int at = order == null ? i : order[i];
            hasLargeChild |= member(members.name(at), members.value(at));
        }
        append((byte) '}');
        keepIfFrontier(object, start, hasLargeChild);
    }

    /** The member positions in RFC 8785 order, or null when stored order is that order (as the hub sends trees). */
    private static int[] canonicalOrder(Members members) {
        int n = members.count();
        int i = 1;
        while (i < n && members.name(i - 1).compareTo(members.name(i)) < 0) i++;
        if (i >= n) return null;
        Integer[] order = new Integer[n];
        for (i = 0; i < n; i++) order[i] = i;
        Arrays.sort(order, (a, b) -> members.name(a).compareTo(members.name(b)));
        int[] positions = new int[n];
        for (i = 0; i < n; i++) positions[i] = order[i];
        return positions;
    }

    /** Writes one member; whether its value's form is at least {@link #KEEP_BYTES} long. */
    private boolean member(String name, Json value) {
        string(name);
        append((byte) ':');
        return writeMeasured(value);
    }

    private void number(double x) {
        if (x == 0) {
            append((byte) '0'); // -0 too
        } else if (EcmaNumber.isSafeInteger(x)) {
            integer((long) x);
        } else {
            String text = EcmaNumber.format(x);
            ensure(text.length());
            for (int i = 0; i < text.length(); i++) bytes[size++] = (byte) text.charAt(i);
        }
    }

    /** The decimal digits of {@code value} (|value| < 2^53). */
    private void integer(long value) {
        ensure(20);
        if (value < 0) {
            bytes[size++] = '-';
            value = -value;
        }
        int digits = 1;
        for (long rest = value / 10; rest > 0; rest /= 10) digits++;
        int end = size + digits;
        for (int i = end - 1; i >= size; i--) {
            bytes[i] = (byte) ('0' + value % 10);
            value /= 10;
        }
        size = end;
    }

    private void string(String s) {
        int n = s.length();
        ensure(n + 2);
        byte[] out = bytes;
        int p = size;
        out[p++] = '"';
        int i = 0;
        // Fast path: printable ASCII needing no escape, one byte per char.
        for (; i < n; i++) {
            char c = s.charAt(i);
            if (c < 0x20 || c >= 0x80 || c == '"' || c == '\\') break;
            out[p++] = (byte) c;
        }
        if (i == n) {
            out[p++] = '"';
            size = p;
            return;
        }
        size = p;
        for (; i < n; i++) {
            char c = s.charAt(i);
            if (c >= 0x80) {
                i = utf8(s, i, c);
            } else if (c < 0x20 || c == '"' || c == '\\') {
                escape(c);
            } else {
                append((byte) c);
            }
        }
        append((byte) '"');
    }

    /** The UTF-8 bytes of the character starting at {@code s[i]} (c ≥ 0x80); returns the index of its last char. */
    private int utf8(String s, int i, char c) {
        ensure(4);
        if (c < 0x800) {
            bytes[size++] = (byte) (0xC0 | c >> 6);
            bytes[size++] = (byte) (0x80 | c & 0x3F);
            return i;
        }
        if (!Character.isSurrogate(c)) {
            bytes[size++] = (byte) (0xE0 | c >> 12);
            bytes[size++] = (byte) (0x80 | c >> 6 & 0x3F);
            bytes[size++] = (byte) (0x80 | c & 0x3F);
            return i;
        }
        // Json holds no lone surrogates: a high surrogate here is followed by a low one.
        int code = Character.toCodePoint(c, s.charAt(i + 1));
        bytes[size++] = (byte) (0xF0 | code >> 18);
        bytes[size++] = (byte) (0x80 | code >> 12 & 0x3F);
        bytes[size++] = (byte) (0x80 | code >> 6 & 0x3F);
        bytes[size++] = (byte) (0x80 | code & 0x3F);
        return i + 1;
    }

    /** RFC 8785 §3.2.2.2: the short escapes where JSON has them, else <code>&#92;u00xx</code>. */
    private void escape(char c) {
        ensure(6);
        bytes[size++] = '\\';
        switch (c) {
            case '"': bytes[size++] = '"'; return;
            case '\\': bytes[size++] = '\\'; return;
            case '\b': bytes[size++] = 'b'; return;
            case '\t': bytes[size++] = 't'; return;
            case '\n': bytes[size++] = 'n'; return;
            case '\f': bytes[size++] = 'f'; return;
            case '\r': bytes[size++] = 'r'; return;
            default:
                bytes[size++] = 'u';
                bytes[size++] = '0';
                bytes[size++] = '0';
                bytes[size++] = HEX[c >> 4];
                bytes[size++] = HEX[c & 0xF];
        }
    }
}
