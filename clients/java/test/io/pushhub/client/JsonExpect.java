package io.pushhub.client;

import java.util.Objects;

/**
 * The assertions of the JSON layer's tests, kept apart from the client's test support so these
 * tests build on their own; each failure is an {@link AssertionError} naming what was checked.
 */
final class JsonExpect {
    private JsonExpect() {}

    static void equal(String what, Object expected, Object actual) {
        if (!Objects.equals(expected, actual)) {
            throw new AssertionError(what + ": expected <" + expected + "> but got <" + actual + ">");
        }
    }

    static void isTrue(String what, boolean condition) {
        if (!condition) throw new AssertionError(what);
    }

    /** Something that may throw. */
    interface Body {
        void run() throws Exception;
    }

    /** {@code body} throws a {@code type}; returns it for checks of its message. */
    static <T extends Throwable> T throwsA(String what, Class<T> type, Body body) {
        try {
            body.run();
        } catch (Throwable thrown) {
            if (type.isInstance(thrown)) return type.cast(thrown);
            throw new AssertionError(what + ": expected a " + type.getSimpleName() + " but got " + thrown, thrown);
        }
        throw new AssertionError(what + ": expected a " + type.getSimpleName() + " but nothing was thrown");
    }

    /** Parsing {@code text} is refused with a message naming {@code offset}, and containing {@code words}. */
    static void refuses(String text, int offset, String words) {
        JsonException e = throwsA("parse " + text, JsonException.class, () -> Json.parse(text));
        String message = e.getMessage();
        if (!message.startsWith("invalid JSON at char " + offset + ": ") || !message.contains(words)) {
            throw new AssertionError("parse " + text + ": expected a refusal at char " + offset + " mentioning \""
                    + words + "\" but got \"" + message + "\"");
        }
    }
}
