package io.pushhub.client;

import static io.pushhub.client.Expect.throwsA;

/** The JSON reader's tests' own assertion (the others are {@link Expect}'s). */
final class JsonExpect {
    private JsonExpect() {}

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
