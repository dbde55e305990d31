package io.pushhub.client;

import java.util.ArrayList;

/**
 * A strict RFC 8259 parser with I-JSON's rules (RFC 7493): no comments, trailing commas, NaN,
 * leading zeros, unescaped control characters, single quotes or repeated member names; lone
 * surrogates are refused, escaped or raw; numbers must fit a double.
 *
 * <p>Invariants: nesting deeper than the limit ({@link #MAX_DEPTH} for app input,
 * {@link #HUB_MAX_DEPTH} for what the hub sends) is refused before it can exhaust the stack;
 * every refusal is a {@link JsonException} naming the char offset in the
 * text where the problem is ({@code "invalid JSON at char 12: ..."}).
 */
final class JsonReader {
    /** The limit for app input ({@link Json#parse(String)}): the hub's own limit for a tree. */
    static final int MAX_DEPTH = 256;
    /**
     * The limit for hub messages, fetch answers and stored screens: the hub accepts trees
     * {@link #MAX_DEPTH} deep and wraps them one to three levels deeper (a snapshot's object, a
     * patch's ops and value), so a tree the hub took always arrives. The Swift client uses the same.
     */
    static final int HUB_MAX_DEPTH = 512;

    private final String text;
    private final int length;
    private final int maxDepth;
    private int index;

    private JsonReader(String text, int maxDepth) {
        this.text = text;
        this.length = text.length();
        this.maxDepth = maxDepth;
    }

    /** Parses one JSON text, nesting at most {@link #MAX_DEPTH} deep. */
    static Json parse(String text) {
        return parse(text, MAX_DEPTH);
    }

    /**
     * Parses one JSON text, nesting at most {@code maxDepth} containers deep; whitespace around
     * the value is allowed, anything else after it is not.
     */
    static Json parse(String text, int maxDepth) {
        JsonReader reader = new JsonReader(text, maxDepth);
        reader.skipWhitespace();
        Json value = reader.value(0);
        reader.skipWhitespace();
        if (reader.index != reader.length) throw reader.error("expected the end of the text after the value");
        return value;
    }

    private JsonException error(String message) {
        return errorAt(index, message);
    }

    private static JsonException errorAt(int offset, String message) {
        return new JsonException("invalid JSON at char " + offset + ": " + message);
    }

    /** The char at the cursor, or -1 at the end. */
    private int current() {
        return index < length ? text.charAt(index) : -1;
    }

    private void skipWhitespace() {
        while (index < length) {
            char c = text.charAt(index);
            if (c != ' ' && c != '\n' && c != '\r' && c != '\t') return;
            index++;
        }
    }

    /** A value at {@code depth} containers deep (0: the top level). */
    private Json value(int depth) {
        int c = current();
        switch (c) {
            case '{': return object(depth + 1);
            case '[': return array(depth + 1);
            case '"': return Json.ownedString(string());
            case 't': return literal("true", Json.TRUE);
            case 'f': return literal("false", Json.FALSE);
            case 'n': return literal("null", Json.NULL);
            case -1: throw error("expected a value, found the end of the text");
            default:
                if (c == '-' || (c >= '0' && c <= '9')) return Json.of(number());
                throw error("expected a value (object, array, string, number, true, false or null)");
        }
    }

    private Json literal(String word, Json value) {
        if (!text.startsWith(word, index)) throw error("expected '" + word + "'");
        index += word.length();
        return value;
    }

    private void checkDepth(int depth) {
        if (depth > maxDepth) throw error("nesting is deeper than " + maxDepth + " levels");
    }

    private Json object(int depth) {
        checkDepth(depth);
        index++; // {
        skipWhitespace();
        if (current() == '}') {
            index++;
            return Json.emptyObject();
        }
        Members.Builder members = new Members.Builder(4);
        while (true) {
            skipWhitespace();
            if (current() != '"') throw error("expected a member name in double quotes");
            int nameOffset = index;
            String name = string();
            skipWhitespace();
            if (current() != ':') throw error("expected ':' after the member name");
            index++;
            skipWhitespace();
            if (!members.add(name, value(depth))) {
                throw errorAt(nameOffset, "duplicate member name \"" + name + "\"");
            }
            skipWhitespace();
            switch (current()) {
                case ',':
                    index++;
                    break;
                case '}':
                    index++;
                    return Json.ownedObject(members.build());
                default:
                    throw error("expected ',' or '}' in the object");
            }
        }
    }

    private Json array(int depth) {
        checkDepth(depth);
        index++; // [
        skipWhitespace();
        if (current() == ']') {
            index++;
            return Json.emptyArray();
        }
        ArrayList<Json> items = new ArrayList<>();
        while (true) {
            skipWhitespace();
            items.add(value(depth));
            skipWhitespace();
            switch (current()) {
                case ',':
                    index++;
                    break;
                case ']':
                    index++;
                    return Json.ownedArray(items);
                default:
                    throw error("expected ',' or ']' in the array");
            }
        }
    }

    /** A string from its opening quote; returns its text, leaves the cursor after the closing quote. */
    private String string() {
        index++; // opening quote
        int start = index;
        // Fast path: no escapes, so the text is a substring.
        while (index < length) {
            char c = text.charAt(index);
            if (c == '"') {
                String s = text.substring(start, index);
                index++;
                return s;
            }
            if (c == '\\') break;
            rawChar(c);
        }
        StringBuilder out = new StringBuilder(index - start + 16).append(text, start, index);
        while (index < length) {
            char c = text.charAt(index);
            if (c == '"') {
                index++;
                return out.toString();
            }
            if (c == '\\') {
                escape(out);
            } else {
                int from = index;
                rawChar(c);
                out.append(text, from, index);
            }
        }
        throw error("the string is not closed");
    }

    /** Checks one unescaped char (or surrogate pair) in a string and moves past it. */
    private void rawChar(char c) {
        if (c < 0x20) throw error("a control character must be escaped in a string");
        if (Character.isSurrogate(c)) {
            boolean paired = Character.isHighSurrogate(c) && index + 1 < length
                    && Character.isLowSurrogate(text.charAt(index + 1));
            if (!paired) {
                throw error("a lone surrogate is not a character (I-JSON)");
            }
            index++;
        }
        index++;
    }

    /** One escape from its backslash, appended to {@code out}. */
    private void escape(StringBuilder out) {
        index++; // backslash
        int c = current();
        if (c == -1) throw error("the escape is not finished");
        switch (c) {
            case '"': out.append('"'); break;
            case '\\': out.append('\\'); break;
            case '/': out.append('/'); break;
            case 'b': out.append('\b'); break;
            case 'f': out.append('\f'); break;
            case 'n': out.append('\n'); break;
            case 'r': out.append('\r'); break;
            case 't': out.append('\t'); break;
            case 'u':
                index++;
                unicodeEscape(out);
                return;
            default:
                throw error("unknown escape; expected one of \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX");
        }
        index++;
    }

    /** The four hex digits after <code>&#92;u</code>, and a low surrogate's escape after a high one. */
    private void unicodeEscape(StringBuilder out) {
        int escapeStart = index - 2;
        char first = hex4();
        if (Character.isLowSurrogate(first)) {
            throw errorAt(escapeStart, "a lone low surrogate \\u" + hex(first) + " is not a character (I-JSON)");
        }
        if (Character.isHighSurrogate(first)) {
            if (!text.startsWith("\\u", index)) {
                throw errorAt(escapeStart,
                        "a high surrogate \\u" + hex(first) + " must be followed by a low surrogate");
            }
            int secondStart = index;
            index += 2;
            char second = hex4();
            if (!Character.isLowSurrogate(second)) {
                throw errorAt(secondStart, "expected a low surrogate \\uDC00-\\uDFFF after \\u" + hex(first));
            }
            out.append(first).append(second);
            return;
        }
        out.append(first);
    }

    private static String hex(char c) {
        return Integer.toHexString(c);
    }

    private char hex4() {
        int value = 0;
        for (int i = 0; i < 4; i++) {
            int digit = index < length ? Character.digit(text.charAt(index), 16) : -1;
            // Character.digit accepts non-ASCII digits too; JSON allows only [0-9a-fA-F].
            if (digit < 0 || text.charAt(index) > 'f') throw error("expected four hex digits after \\u");
            value = value << 4 | digit;
            index++;
        }
        return (char) value;
    }

    /** A number per RFC 8259 §6, read with {@link Double#parseDouble} (correctly rounded); it must be finite. */
    private double number() {
        int start = index;
        boolean negative = current() == '-';
        if (negative) index++;
        int first = current();
        if (first < '0' || first > '9') throw error("expected a digit in the number");
        if (first == '0') {
            index++;
            if (isDigit(current())) throw error("a number must not have leading zeros");
        } else {
            skipDigits();
        }
        boolean integral = true;
        if (current() == '.') {
            integral = false;
            index++;
            if (!isDigit(current())) throw error("expected a digit after the decimal point");
            skipDigits();
        }
        if (current() == 'e' || current() == 'E') {
            integral = false;
            index++;
            if (current() == '+' || current() == '-') index++;
            if (!isDigit(current())) throw error("expected a digit in the exponent");
            skipDigits();
        }
        int digitsStart = negative ? start + 1 : start;
        if (integral && index - digitsStart <= 15) {
            // Exact in a double: no need for the general conversion. -0 keeps its sign.
            long magnitude = 0;
            for (int i = digitsStart; i < index; i++) magnitude = magnitude * 10 + (text.charAt(i) - '0');
            return negative ? -(double) magnitude : (double) magnitude;
        }
        String literal = text.substring(start, index);
        double value = Double.parseDouble(literal);
        if (Double.isInfinite(value)) {
            throw errorAt(start, "the number " + literal + " is out of the range of a double");
        }
        return value;
    }

    private static boolean isDigit(int c) {
        return c >= '0' && c <= '9';
    }

    private void skipDigits() {
        while (index < length && isDigit(text.charAt(index))) index++;
    }
}
