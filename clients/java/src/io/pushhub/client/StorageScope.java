package io.pushhub.client;

import java.nio.charset.StandardCharsets;
import java.util.Base64;

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

    String screenKey(String screen) { return name + ":screen:" + screen; }

    /** The {@code sub} claim of a JWT's payload, unverified; {@code null} when the token is not a readable JWT. */
    static String subjectOfToken(String token) {
        String[] parts = token.split("\\.", -1);
        if (parts.length < 2) return null;
        try {
            String payload = parts[1].replace('+', '-').replace('/', '_');
            while (payload.endsWith("=")) payload = payload.substring(0, payload.length() - 1);
            Json claims = Json.parse(new String(Base64.getUrlDecoder().decode(payload), StandardCharsets.UTF_8));
            String subject = Fields.string(claims, "sub");
            return subject == null || subject.isEmpty() ? null : subject;
        } catch (IllegalArgumentException | JsonException e) {
            return null;
        }
    }

    private static String encoded(String text) {
        StringBuilder out = new StringBuilder();
        for (byte b : text.getBytes(StandardCharsets.UTF_8)) {
            char c = (char) (b & 0xff);
            if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.'
                    || c == '_' || c == '~') {
                out.append(c);
            } else {
                out.append('%').append(Character.toUpperCase(Character.forDigit((b >> 4) & 0xf, 16)))
                        .append(Character.toUpperCase(Character.forDigit(b & 0xf, 16)));
            }
        }
        return out.toString();
    }

    @Override
    public boolean equals(Object other) { return other instanceof StorageScope && ((StorageScope) other).name.equals(name); }

    @Override
    public int hashCode() { return name.hashCode(); }

    @Override
    public String toString() { return name.isEmpty() ? "(no scope)" : name; }
}
