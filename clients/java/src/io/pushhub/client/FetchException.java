package io.pushhub.client;

/**
 * Why a {@link PushHub#fetchScreen} failed. {@link #code()} is the hub's error code when the hub
 * answered ({@code unauthorized} 401, {@code unknown_screen} 404, {@code bad_app_version} 400, …:
 * its JSON body {@code {"error":{"code"}}}); {@code http_<status>} for an answer that is not the
 * hub's (a proxy's 404 or 502); {@code mismatch} (the tree does not hash to its hash),
 * {@code network} (no answer, status 0), {@code http} (a 200 that is not a screen, a 304 for a
 * tree not held). The same codes as the JavaScript and Swift clients'.
 */
public final class FetchException extends Exception {
    private static final long serialVersionUID = 1L;

    private final String code;
    private final int status;

    FetchException(String code, int status, String message) {
        super(message);
        this.code = code;
        this.status = status;
    }

    /** The fetch could not be made or finished: the client was closed ({@code network}, status 0). */
    static FetchException clientClosed() {
        return new FetchException("network", 0, "the client was closed");
    }

    public String code() { return code; }

    /** The HTTP status (0 when there was no answer). */
    public int status() { return status; }

    @Override
    public String toString() { return "FetchException(" + code + ", " + status + "): " + getMessage(); }
}
