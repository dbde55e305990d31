package io.pushhub.client;

import java.util.Objects;

/**
 * An {@code error} message from the hub (docs/protocol.md "Errors": {@code unknown_screen},
 * {@code unauthorized}, …), or a client-side problem: {@code storage} (a storage call threw; the
 * client goes on from memory), {@code token} (the token provider threw; the client connects
 * without a token), {@code bad_json} (the hub sent text that is not JSON, or nested deeper than
 * 512). A connection that could not open is a {@link CloseEvent} (1006, its reason saying why),
 * not an error.
 * {@code screen} is set when a subscribe was refused: that subscription ended. Immutable.
 */
public final class HubError implements ClientEvent {
    private final String code;
    private final String message;
    private final String ref;
    private final String screen;

    HubError(String code, String message, String ref, String screen) {
        this.code = code;
        this.message = message;
        this.ref = ref;
        this.screen = screen;
    }

    public String code() { return code; }

    public String message() { return message; }

    /** The message type the error answers ({@code "subscribe"}), or {@code null}. */
    public String ref() { return ref; }

    /** The screen whose subscribe was refused, or {@code null}. */
    public String screen() { return screen; }

    HubError withScreen(String screen) { return new HubError(code, message, ref, screen); }

    @Override
    public void deliverTo(ClientListener listener) { listener.onError(this); }

    @Override
    public boolean equals(Object other) {
        if (!(other instanceof HubError)) return false;
        HubError e = (HubError) other;
        return code.equals(e.code) && message.equals(e.message) && Objects.equals(ref, e.ref)
                && Objects.equals(screen, e.screen);
    }

    @Override
    public int hashCode() { return Objects.hash(code, message, ref, screen); }

    @Override
    public String toString() {
        return "HubError(" + code + ": " + message + (ref == null ? "" : ", ref " + ref)
                + (screen == null ? "" : ", screen " + screen) + ")";
    }
}
