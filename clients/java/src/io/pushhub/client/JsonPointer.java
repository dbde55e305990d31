package io.pushhub.client;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * An RFC 6901 JSON Pointer: {@code /a/0/b~1c} is the tokens {@code a}, {@code 0}, {@code b/c};
 * the empty pointer names the whole document.
 *
 * <p>Invariants: {@code tokens} are unescaped ({@code ~1} read as {@code /}, then {@code ~0} as
 * {@code ~}); {@link #toString()} is the text it was read from, escaped again.
 */
final class JsonPointer {
    private final List<String> tokens;

    private JsonPointer(List<String> tokens) {
        this.tokens = tokens;
    }

    /** Reads a pointer; a text not starting with "/" (other than "") or a "~" not followed by 0 or 1 is refused. */
    static JsonPointer parse(String text) {
        if (text.isEmpty()) return new JsonPointer(Collections.emptyList());
        if (text.charAt(0) != '/') {
            throw new JsonException("\"" + text + "\" is not a JSON Pointer (\"\" or starting with \"/\")");
        }
        ArrayList<String> tokens = new ArrayList<>();
        StringBuilder token = new StringBuilder();
        for (int i = 1; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c == '/') {
                tokens.add(token.toString());
                token.setLength(0);
            } else if (c == '~') {
                char next = i + 1 < text.length() ? text.charAt(i + 1) : 0;
                if (next != '0' && next != '1') {
                    throw new JsonException("\"" + text + "\" has a \"~\" not followed by 0 or 1 (char " + i + ")");
                }
                token.append(next == '0' ? '~' : '/');
                i++;
            } else {
                token.append(c);
            }
        }
        tokens.add(token.toString());
        return new JsonPointer(Collections.unmodifiableList(tokens));
    }

    int size() {
        return tokens.size();
    }

    boolean isRoot() {
        return tokens.isEmpty();
    }

    String token(int i) {
        return tokens.get(i);
    }

    String last() {
        return tokens.get(tokens.size() - 1);
    }

    /** Whether this pointer names a value strictly inside the one {@code other} names. */
    boolean isInside(JsonPointer other) {
        return tokens.size() > other.tokens.size() && tokens.subList(0, other.tokens.size()).equals(other.tokens);
    }

    /**
     * The array index a token names (RFC 6901 §4: "0" or digits without a leading zero), checked
     * to be below {@code count}; with {@code allowsEnd} (RFC 6902's add), {@code count} itself and
     * "-" (the end) are allowed too.
     */
    static int arrayIndex(String token, int count, boolean allowsEnd) {
        if (token.equals("-")) {
            if (allowsEnd) return count;
            throw new JsonException("\"-\" (past the end of the array) names no element");
        }
        int n = token.length();
        boolean digits = n > 0 && n <= 9 && (token.charAt(0) != '0' || n == 1);
        for (int i = 0; digits && i < n; i++) digits = token.charAt(i) >= '0' && token.charAt(i) <= '9';
        if (!digits) {
            boolean huge = n > 9 && token.chars().allMatch(c -> c >= '0' && c <= '9') && token.charAt(0) != '0';
            throw new JsonException(huge ? "index " + token + " is out of range (" + count + " elements)"
                                         : "\"" + token + "\" is not an array index");
        }
        int index = Integer.parseInt(token);
        if (index < count || (allowsEnd && index == count)) return index;
        throw new JsonException("index " + index + " is out of range (" + count + " elements)");
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof JsonPointer && tokens.equals(((JsonPointer) other).tokens);
    }

    @Override
    public int hashCode() {
        return tokens.hashCode();
    }

    @Override
    public String toString() {
        StringBuilder out = new StringBuilder();
        for (String token : tokens) {
            out.append('/');
            for (int i = 0; i < token.length(); i++) {
                char c = token.charAt(i);
                if (c == '~') out.append("~0");
                else if (c == '/') out.append("~1");
                else out.append(c);
            }
        }
        return out.toString();
    }
}
