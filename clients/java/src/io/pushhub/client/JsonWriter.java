package io.pushhub.client;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

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
 * <p>Invariant: {@code Json.parse(text) .equals(value)} for the text written from every value.
 * A writer is single-use and not shared between threads.
 */
final class JsonWriter {
    private static final byte[] HEX = "0123456789abcdef".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] NULL = {'n', 'u', 'l', 'l'};
    private static final byte[] TRUE = {'t', 'r', 'u', 'e'};
    private static final byte[] FALSE = {'f', 'a', 'l', 's', 'e'};

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
            case ARRAY: array(value.items()); break;
            case OBJECT: object(value.members()); break;
            default: throw new AssertionError(value.kind());
        }
    }

    private void array(List<Json> items) {
        append((byte) '[');
        for (int i = 0, n = items.size(); i < n; i++) {
            if (i > 0) append((byte) ',');
            write(items.get(i));
        }
        append((byte) ']');
    }

    private void object(Map<String, Json> members) {
        append((byte) '{');
        if (sortsMembers) {
            String[] names = members.keySet().toArray(new String[0]);
            if (!isSorted(names)) Arrays.sort(names);
            for (int i = 0; i < names.length; i++) {
                if (i > 0) append((byte) ',');
                member(names[i], members.get(names[i]));
            }
        } else {
            boolean first = true;
            for (Map.Entry<String, Json> member : members.entrySet()) {
                if (!first) append((byte) ',');
                first = false;
                member(member.getKey(), member.getValue());
            }
        }
        append((byte) '}');
    }

    /** Whether the names are already in RFC 8785 order (the hub sends canonical trees, so usually yes). */
    private static boolean isSorted(String[] names) {
        for (int i = 1; i < names.length; i++) {
            if (names[i - 1].compareTo(names[i]) > 0) return false;
        }
        return true;
    }

    private void member(String name, Json value) {
        string(name);
        append((byte) ':');
        write(value);
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
