package io.pushhub.client;

import java.util.Collections;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/** An HTTP answer of {@link Transport#get}: status, headers (names lower-case), body. Immutable. */
public final class HttpAnswer {
    private final int status;
    private final Map<String, String> headers;
    private final byte[] body;

    /** {@code headers}: each name once (several values joined with ", "); names are lower-cased here. */
    public HttpAnswer(int status, Map<String, String> headers, byte[] body) {
        this.status = status;
        Map<String, String> lower = new TreeMap<>();
        headers.forEach((name, value) -> lower.put(name.toLowerCase(Locale.ROOT), value));
        this.headers = Collections.unmodifiableMap(lower);
        this.body = body.clone();
    }

    public int status() { return status; }

    /** The value of header {@code name} (any case), or {@code null}. */
    public String header(String name) { return headers.get(name.toLowerCase(Locale.ROOT)); }

    public byte[] body() { return body.clone(); }
}
