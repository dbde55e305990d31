package io.pushhub.client;

import java.nio.charset.StandardCharsets;

/**
 * Where one user's state lives in a {@link ClientStorage} (docs/clients.md "Storage"): every key
 * but the anonymous device id is inside the scope of a user — {@code user:<sub>} when signed in
 * (the token's {@code sub}, read without verifying it: the hub verifies), else
 * {@code device:<id>} — so one user's trees and {@code last_sync} are never read for another,
 * whoever shares the storage. The same keys as the JavaScript and Swift clients':
 * <pre>
 * device                        the generated device id (anonymous clients)
 * user:u42:epoch                {"epoch":"e-…","last_sync":1240}   the hub state the scope belongs to
 * user:u42:screen:home          {"epoch":"e-…","hash":"…","tree":{…},"variants":{…},"version":42}
 * </pre>
 * Invariant: the user part is percent-encoded (only letters, digits and {@code -._~} stay), so no
 * two users' keys collide and a key never holds a second {@code :} before {@code epoch}/{@code screen:}.
 * Immutable.
 */
final class StorageScope {
    /** No scope yet (before the first connection names the user): equal to no real one. */
    static final StorageScope NONE = new StorageScope("");
    /** The unscoped key of the anonymous device id (it names the scope, so it cannot be in one). */
    static final String DEVICE_KEY = "device";
    /** What clients before scopes kept unscoped; whose it was is unknown, so it is removed unread. */
    static final String LEGACY_LAST_SYNC_KEY = "last_sync";

    /** {@code user:<sub>} or {@code device:<id>}, encoded; "" for {@link #NONE}. */
    final String name;

    private StorageScope(String name) { this.name = name; }

    /** The scope of a client signing in with {@code token}, else as {@code device}. */
    static StorageScope of(String token, String device) {
        if (token != null) {
            String subject = subjectOfToken(token);
            return new StorageScope("user:" + encoded(subject == null ? "" : subject));
        }
        return new StorageScope("device:" + encoded(device == null ? "" : device));
    }

    /** The scope's record: its epoch and {@code last_sync}. */
    String recordKey() { return name + ":epoch"; }

    /** The ids of the last syncs handed to the app (a JSON array, oldest first). */
    String handledSyncsKey() { return name + ":syncs"; }

    /** The unscoped key of the device's push token (it belongs to the device, whoever signs in). */
    static final String PUSH_TOKEN_KEY = "push_token";

    String screenKey(String screen) { return name + ":screen:" + screen; }

    /** The {@code sub} claim of a JWT's payload, unverified; {@code null} when the token is not a readable JWT. */
    static String subjectOfToken(String token) {
        String[] parts = token.split("\\.", -1);
        if (parts.length < 2) return null;
        byte[] payload = base64UrlDecoded(parts[1]);
        if (payload == null) return null;
        try {
            Json claims = Json.parse(new String(payload, StandardCharsets.UTF_8));
            String subject = Fields.string(claims, "sub");
            return subject == null || subject.isEmpty() ? null : subject;
        } catch (JsonException e) {
            return null;
        }
    }

    private static String encoded(String text) {
        return PercentEncoding.encode(text, PercentEncoding.UNRESERVED);
    }

    /**
     * The bytes of base64url {@code text} (RFC 4648 §5; '+' and '/' taken too, padding ignored),
     * or {@code null} when it is not base64. By hand: {@code java.util.Base64} is Android API 26+.
     */
    static byte[] base64UrlDecoded(String text) {
        String alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        int bits = 0;
        int value = 0;
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c == '=') break;
            int digit = alphabet.indexOf(c == '+' ? '-' : c == '/' ? '_' : c);
            if (digit < 0) return null;
            value = (value << 6) | digit;
            bits += 6;
            if (bits >= 8) {
                bits -= 8;
                out.write((value >> bits) & 0xff);
            }
        }
        return out.toByteArray();
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof StorageScope && ((StorageScope) other).name.equals(name);
    }

    @Override
    public int hashCode() { return name.hashCode(); }

    @Override
    public String toString() { return name.isEmpty() ? "(no scope)" : name; }
}
