package io.pushhub.client;

import java.util.Objects;

/**
 * The assertions of our tests ({@link TestRunner}): each throws an {@link AssertionError} that
 * says what was expected, what came, and (first argument) what was being checked.
 */
public final class Expect {
    private Expect() {}

    /** {@code actual} equals {@code expected} ({@link Objects#equals}). */
    public static void equal(String what, Object expected, Object actual) {
        if (!Objects.equals(expected, actual)) {
            throw new AssertionError(what + ": expected <" + expected + "> but got <" + actual + ">");
        }
    }

    /** {@code condition} holds. */
    public static void isTrue(String what, boolean condition) {
        if (!condition) throw new AssertionError(what);
    }

    /** Something that must not happen happened. */
    public static AssertionError fail(String what) {
        throw new AssertionError(what);
    }

    /** A body that may throw anything. */
    @FunctionalInterface
    public interface Body {
        void run() throws Exception;
    }

    /** {@code body} throws a {@code type} (returned, for checks of its message). */
    public static <T extends Throwable> T throwsA(String what, Class<T> type, Body body) {
        try {
            body.run();
        } catch (Throwable thrown) {
            if (type.isInstance(thrown)) return type.cast(thrown);
            throw new AssertionError(what + ": expected a " + type.getSimpleName() + " but got " + thrown, thrown);
        }
        throw new AssertionError(what + ": expected a " + type.getSimpleName() + " but nothing was thrown");
    }
}
