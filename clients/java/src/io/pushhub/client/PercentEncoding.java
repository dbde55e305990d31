package io.pushhub.client;

import java.nio.charset.StandardCharsets;

/**
 * Percent-encoding (RFC 3986 §2.1) of a string's UTF-8 bytes: ASCII letters and digits, and the
 * characters the caller allows, stay; every other byte becomes {@code %XX} (upper-case hex). Used
 * for storage scopes and keys and for HTTP paths and queries. Hand-written rather than
 * {@code URLEncoder.encode(String, Charset)}, which Android has only from API 33.
 */
final class PercentEncoding {
    /** RFC 3986's unreserved characters besides letters and digits. */
    static final String UNRESERVED = "-._~";

    private PercentEncoding() {}

    static String encode(String text, String allowed) {
        StringBuilder out = new StringBuilder(text.length());
        for (byte b : text.getBytes(StandardCharsets.UTF_8)) {
            char c = (char) (b & 0xff);
            if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || allowed.indexOf(c) >= 0) {
                out.append(c);
            } else {
                out.append('%').append(Character.toUpperCase(Character.forDigit((b >> 4) & 0xf, 16)))
                        .append(Character.toUpperCase(Character.forDigit(b & 0xf, 16)));
            }
        }
        return out.toString();
    }
}
