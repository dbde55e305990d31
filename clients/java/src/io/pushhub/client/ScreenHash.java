package io.pushhub.client;

import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;

/**
 * DESIGN §4: the hash of a rendered tree is the lowercase hex SHA-256 of the UTF-8 bytes of its
 * RFC 8785 canonical form, so every client recomputes what the hub sent.
 */
public final class ScreenHash {
    private static final char[] HEX = "0123456789abcdef".toCharArray();

    private ScreenHash() {}

    /** 64 lowercase hex digits: SHA-256 of {@code tree.canonical()} in UTF-8. */
    public static String of(Json tree) {
        JsonWriter canonical = JsonWriter.canonicalUtf8(tree);
        return of(canonical.buffer(), canonical.size());
    }

    /** The hash of {@code bytes[0 ..< count]}, already canonical UTF-8. */
    static String of(byte[] bytes, int count) {
        MessageDigest sha256 = sha256();
        sha256.update(bytes, 0, count);
        return hex(sha256.digest());
    }

    private static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new AssertionError("every Java platform has SHA-256", e);
        }
    }

    private static String hex(byte[] digest) {
        char[] out = new char[digest.length * 2];
        for (int i = 0; i < digest.length; i++) {
            out[2 * i] = HEX[digest[i] >> 4 & 0xF];
            out[2 * i + 1] = HEX[digest[i] & 0xF];
        }
        return new String(out);
    }
}
