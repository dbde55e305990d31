package io.pushhub.client;

import java.util.Objects;

/**
 * A device's push token for the hub's silent-push fallback (DESIGN §17): FCM (the registration
 * token {@code FirebaseMessagingService.onNewToken} hands the app) or APNs (a device token, sent
 * as lower-case hex, with the app's bundle id as topic). Immutable.
 *
 * <p>The wire form, and the stored form ({@code push_token}, outside every user's scope: the
 * token belongs to the device): {@code {"type":"push_token","provider":"fcm","token":"…"}}, with
 * {@code "topic"} for APNs.
 */
public final class PushToken {
    private final String provider;
    private final String token;
    private final String topic;

    private PushToken(String provider, String token, String topic) {
        this.provider = provider;
        this.token = token;
        this.topic = topic;
    }

    /** An FCM registration token; an {@link IllegalArgumentException} when it is null or empty. */
    public static PushToken fcm(String token) {
        if (token == null || token.isEmpty()) throw new IllegalArgumentException("PushToken.fcm: the token is empty");
        return new PushToken("fcm", token, null);
    }

    /** An APNs device token (its bytes, sent as lower-case hex) for the app whose bundle id is {@code topic}. */
    public static PushToken apns(byte[] deviceToken, String topic) {
        if (deviceToken == null || deviceToken.length == 0 || topic == null || topic.isEmpty()) {
            throw new IllegalArgumentException("PushToken.apns: needs the device token's bytes and the bundle id");
        }
        StringBuilder hex = new StringBuilder();
        for (byte b : deviceToken) hex.append(String.format("%02x", b));
        return new PushToken("apns", hex.toString(), topic);
    }

    /** {@code "apns"} or {@code "fcm"}. */
    public String provider() { return provider; }

    public String token() { return token; }

    /** The APNs topic; null for FCM. */
    public String topic() { return topic; }

    /** The {@code push_token} message registering this token (also its stored form). */
    Json message() {
        return topic == null ? Fields.object("type", "push_token", "provider", provider, "token", token)
                : Fields.object("type", "push_token", "provider", provider, "token", token, "topic", topic);
    }

    /** The {@code push_token} message removing this device's token (sign-out). */
    static Json removal() { return Fields.object("type", "push_token", "token", Json.NULL); }

    /** A stored token; null when {@code text} is null or unreadable (as good as absent). */
    static PushToken parse(String text) {
        if (text == null) return null;
        try {
            Json value = Json.parse(text);
            String provider = Fields.string(value, "provider");
            String token = Fields.string(value, "token");
            if (token == null || token.isEmpty() || !("apns".equals(provider) || "fcm".equals(provider))) return null;
            return new PushToken(provider, token, Fields.string(value, "topic"));
        } catch (JsonException e) {
            return null;
        }
    }

    @Override
    public boolean equals(Object other) {
        if (!(other instanceof PushToken)) return false;
        PushToken t = (PushToken) other;
        return provider.equals(t.provider) && token.equals(t.token) && Objects.equals(topic, t.topic);
    }

    @Override
    public int hashCode() { return Objects.hash(provider, token, topic); }

    @Override
    public String toString() { return message().toString(); }
}
