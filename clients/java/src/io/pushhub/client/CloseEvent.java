package io.pushhub.client;

import java.util.Objects;

/**
 * A connection closed: the close code the hub sent (1006 when the connection dropped, never
 * opened, or was given up as dead), the reason, and what the client does next. Immutable.
 *
 * <p>Codes (docs/protocol.md): 1000 closed by the app; 1001 the hub is going away (restarting:
 * the client retries at once with a short ceiling); 1006 no close frame; 1008 policy (hello
 * timeout, unauthorized, limits); 1009 message too big.
 */
public final class CloseEvent implements ClientEvent {
    private final int code;
    private final String reason;
    private final Long retryInMs;
    private final int attempt;
    private final HubError error;

    CloseEvent(int code, String reason, Long retryInMs, int attempt, HubError error) {
        this.code = code;
        this.reason = reason;
        this.retryInMs = retryInMs;
        this.attempt = attempt;
        this.error = error;
    }

    public int code() { return code; }

    public String reason() { return reason; }

    /** Whether the client connects again (after {@link #retryInMs()}). */
    public boolean willReconnect() { return retryInMs != null; }

    /** The delay before the next attempt; {@code null} when the client will not reconnect. */
    public Long retryInMs() { return retryInMs; }

    /** Reconnect attempts since the last welcome (or close 1001), this one included. */
    public int attempt() { return attempt; }

    /** The error reconnecting cannot fix ({@code unauthorized}, {@code unsupported_protocol}), or {@code null}. */
    public HubError error() { return error; }

    @Override
    public void deliverTo(ClientListener listener) { listener.onClose(this); }

    @Override
    public boolean equals(Object other) {
        if (!(other instanceof CloseEvent)) return false;
        CloseEvent c = (CloseEvent) other;
        return code == c.code && reason.equals(c.reason) && Objects.equals(retryInMs, c.retryInMs)
                && attempt == c.attempt && Objects.equals(error, c.error);
    }

    @Override
    public int hashCode() { return Objects.hash(code, reason, retryInMs, attempt, error); }

    @Override
    public String toString() {
        return "CloseEvent(" + code + " " + reason + (retryInMs == null ? ", final" : ", retry in " + retryInMs + " ms")
                + ", attempt " + attempt + (error == null ? "" : ", " + error) + ")";
    }
}
