package io.pushhub.client;

/**
 * A goal event the app reports for experiment results (DESIGN §6):
 * {@code {"type":"track","event":"purchase","value":12.5}}. The twin of
 * Sources/PushHubClient/Track.swift.
 *
 * <p>Invariant: {@code event} is 1–64 characters of {@code [A-Za-z0-9_.:-]} and {@code value},
 * when set, is finite — what the hub accepts (docs/protocol.md), checked here so that a bad one is
 * refused at the call that made it rather than by a {@code bad_track} error from the hub later,
 * on another thread. Immutable.
 */
final class Track {
    static final int MAX_EVENT_LENGTH = 64;

    final String event;
    final Double value;

    /** @throws IllegalArgumentException saying what to fix, when the hub would refuse it */
    Track(String event, Double value) {
        if (event == null || event.isEmpty()) throw refusal("the event name is empty");
        for (int i = 0; i < event.length(); i++) {
            char c = event.charAt(i);
            boolean allowed = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'
                    || c == '.' || c == ':' || c == '-';
            if (!allowed) {
                String character = new String(Character.toChars(event.codePointAt(i)));
                throw refusal("the event name " + Json.of(event) + " has \"" + character
                        + "\" at offset " + i);
            }
        }
        if (event.length() > MAX_EVENT_LENGTH) {
            throw refusal("the event name is " + event.length() + " characters long");
        }
        if (value != null && (value.isNaN() || value.isInfinite())) {
            throw new IllegalArgumentException(
                    "track: the value of \"" + event + "\" is " + value + "; it must be a finite number");
        }
        this.event = event;
        this.value = value;
    }

    /** The message to send. */
    Json message() {
        return value == null ? Fields.object("type", "track", "event", event)
                : Fields.object("type", "track", "event", event, "value", value);
    }

    private static IllegalArgumentException refusal(String problem) {
        return new IllegalArgumentException("track: " + problem + "; an event name is 1 to " + MAX_EVENT_LENGTH
                + " characters of A-Z a-z 0-9 _ . : -");
    }
}
