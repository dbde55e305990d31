package io.pushhub.client;

/**
 * A JSON text that could not be read, or a JSON Patch that could not be applied.
 *
 * <p>Parse failures name the char offset in the text ({@code "invalid JSON at char 7: ..."});
 * patch failures name the operation's index ({@code "patch operation 2: ..."}).
 */
public class JsonException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public JsonException(String message) {
        super(message);
    }
}
