package io.pushhub.client;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The HTTP fetch of one screen (DESIGN §12, docs/protocol.md "HTTP fetch") as pure functions:
 * the request a client sends ({@code GET /v1/screens/{name}} on the hub's host, ws → http, wss →
 * https, with the token, or the device, the app and the components, and the held tree's ETag as
 * {@code If-None-Match}), and what an answer means. The twin of clients/js/src/fetch-screen.js.
 */
final class ScreenFetch {
    private ScreenFetch() {}

    /**
     * The fetch's ETag for a tree and its variants: the hash, then, when there are variants, "."
     * and the first 16 hex digits of SHA-256 of their canonical JSON (a change of variants alone
     * is not answered 304).
     */
    static String tag(String hash, Map<String, String> variants) {
        if (variants.isEmpty()) return hash;
        return hash + "." + ScreenHash.of(Fields.json(new java.util.TreeMap<>(variants))).substring(0, 16);
    }

    /** The request for {@code screen} as this client; {@code held}: the tree it holds or has stored (nullable). */
    static TransportRequest request(URI hub, String screen, String token, String device, String platform,
            String appVersion, Map<String, Integer> components, StoredScreen held) {
        String scheme = hub.getScheme().equalsIgnoreCase("wss") ? "https" : "http";
        String base = hub.getRawPath() == null ? "" : hub.getRawPath();
        String prefix = base.endsWith("/v1/connect") ? base.substring(0, base.length() - "/v1/connect".length()) : "";
        StringBuilder path = new StringBuilder(prefix).append("/v1/screens");
        for (String segment : screen.split("/", -1)) path.append('/').append(encoded(segment));
        Map<String, String> query = new LinkedHashMap<>();
        if (token == null && device != null) query.put("device", device);
        if (platform != null) query.put("platform", platform);
        if (appVersion != null) query.put("app_version", appVersion);
        if (components != null) query.put("components", ComponentCapabilities.query(components));
        StringBuilder target = new StringBuilder(scheme).append("://").append(hub.getRawAuthority()).append(path);
        String separator = "?";
        for (Map.Entry<String, String> parameter : query.entrySet()) {
            target.append(separator).append(parameter.getKey()).append('=').append(encoded(parameter.getValue()));
            separator = "&";
        }
        Map<String, String> headers = new LinkedHashMap<>();
        headers.put("Accept", "application/json");
        if (token != null) headers.put("Authorization", "Bearer " + token);
        if (held != null) headers.put("If-None-Match", "\"" + tag(held.hash, held.variants) + "\"");
        return new TransportRequest(URI.create(target.toString()), null, headers);
    }

    /** RFC 3986 unreserved characters stay; everything else is percent-encoded (a space as %20). */
    static String encoded(String text) {
        return PercentEncoding.encode(text, PercentEncoding.UNRESERVED);
    }

    /**
     * What {@code answer} means for {@code screen}: the screen (a 304 returns {@code held}), or
     * the failure as a {@link FetchException}. A 200's tree is checked against its hash.
     */
    static FetchedScreen answered(String screen, HttpAnswer answer, StoredScreen held) throws FetchException {
        switch (answer.status()) {
            case 304:
                if (held == null) throw new FetchException("http", 304, "304 for a tree this client does not hold");
                return new FetchedScreen(screen, held.tree, held.version, held.hash, held.variants, 304);
            case 200: {
                Json body;
                try {
                    body = Json.parse(new String(answer.body(), StandardCharsets.UTF_8), JsonReader.HUB_MAX_DEPTH);
                } catch (JsonException e) {
                    throw new FetchException("http", 200, "the answer is not JSON: " + e.getMessage());
                }
                Json tree = Fields.member(body, "tree");
                Long version = Fields.integer(body, "version");
                String hash = Fields.string(body, "hash");
                if (tree == null || version == null || hash == null) {
                    throw new FetchException("http", 200, "not a screen");
                }
                String actual = ScreenHash.of(tree);
                if (!actual.equals(hash)) {
                    throw new FetchException("mismatch", 200, "the tree hashes to " + actual + ", not " + hash);
                }
                return new FetchedScreen(screen, tree, version, hash,
                        Fields.variantsOrNone(Fields.member(body, "variants")), 200);
            }
            default:
                throw refusal(answer);
        }
    }

    /** The error of a non-200, non-304 answer: the hub's code and message, else {@code http_<status>}. */
    private static FetchException refusal(HttpAnswer answer) {
        String text = new String(answer.body(), StandardCharsets.UTF_8);
        try {
            Json error = Fields.member(Json.parse(text), "error");
            String code = Fields.string(error, "code");
            if (code != null) {
                String message = Fields.string(error, "message");
                return new FetchException(code, answer.status(), message == null ? "" : message);
            }
        } catch (JsonException notTheHubs) {
            // not the hub's error body: said below
        }
        String excerpt = text.substring(0, Math.min(200, text.length())).replaceAll("\\s+", " ").trim();
        return new FetchException("http_" + answer.status(), answer.status(),
                "not a PushHub answer (HTTP " + answer.status() + " from a proxy?)"
                        + (excerpt.isEmpty() ? "" : ": " + excerpt));
    }
}
