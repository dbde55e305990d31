package io.pushhub.client;

import java.net.URI;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Where a transport connects, the subprotocol it offers and the headers it sends
 * ({@code Authorization}). Immutable.
 */
public final class TransportRequest {
    private final URI uri;
    private final String subprotocol;
    private final Map<String, String> headers;

    public TransportRequest(URI uri, String subprotocol, Map<String, String> headers) {
        this.uri = uri;
        this.subprotocol = subprotocol;
        this.headers = Collections.unmodifiableMap(new LinkedHashMap<>(headers));
    }

    public URI uri() { return uri; }

    /** {@code pushhub.v1}, or {@code null} for none. */
    public String subprotocol() { return subprotocol; }

    public Map<String, String> headers() { return headers; }
}
