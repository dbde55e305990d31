package io.pushhub.client;

import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;

/**
 * What went wrong, as one line for a close reason or a {@link FetchException}: the failure
 * (unwrapped from a future's {@code CompletionException} or {@code ExecutionException}) as
 * {@code Class: message}, and its cause when it has one. Links nothing of {@code java.net.http}
 * (Android has none), so every transport's failures are described with it.
 */
final class FailureText {
    private FailureText() {}

    static String of(Throwable failure) {
        Throwable error = failure;
        while ((error instanceof CompletionException || error instanceof ExecutionException)
                && error.getCause() != null) {
            error = error.getCause();
        }
        StringBuilder out = new StringBuilder(error.getClass().getSimpleName());
        if (error.getMessage() != null) out.append(": ").append(error.getMessage());
        Throwable cause = error.getCause();
        if (cause != null && cause != error) {
            out.append(" (").append(cause.getClass().getSimpleName());
            if (cause.getMessage() != null) out.append(": ").append(cause.getMessage());
            out.append(')');
        }
        return out.toString();
    }
}
