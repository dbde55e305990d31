package io.pushhub.client.e2e;

import io.pushhub.client.HttpAnswer;
import io.pushhub.client.Json;
import io.pushhub.client.Transport;
import io.pushhub.client.TransportConnection;
import io.pushhub.client.TransportListener;
import io.pushhub.client.TransportRequest;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * A transport that can spoil the next {@code patch} the hub sends (a wrong {@code hash}, or a
 * {@code from} one lower), so the end-to-end test sees the client's clean resubscribe.
 */
final class TamperingTransport implements Transport {
    private final Transport inner;
    private volatile String tamper;

    TamperingTransport(Transport inner) {
        this.inner = inner;
    }

    void tamperNext(String field) {
        tamper = field;
    }

    @Override
    public TransportConnection open(TransportRequest request, TransportListener listener) {
        return inner.open(request, new TransportListener() {
            @Override
            public void onOpen() { listener.onOpen(); }

            @Override
            public void onText(String text) { listener.onText(spoiled(text)); }

            @Override
            public void onClosed(int code, String reason) { listener.onClosed(code, reason); }
        });
    }

    @Override
    public CompletableFuture<HttpAnswer> get(TransportRequest request) {
        return inner.get(request);
    }

    private String spoiled(String text) {
        String field = tamper;
        if (field == null || !text.contains("\"type\":\"patch\"")) return text;
        tamper = null;
        Map<String, Json> members = new LinkedHashMap<>(Json.parse(text).members());
        if (field.equals("hash")) {
            members.put("hash", Json.of("0".repeat(64)));
        } else {
            members.put("from", Json.of(members.get("from").asDouble() - 1));
        }
        return Json.object(members).toString();
    }
}
