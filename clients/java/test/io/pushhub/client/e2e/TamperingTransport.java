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
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A transport that can spoil the next {@code patch} the hub sends (a wrong {@code hash}, or a
 * {@code from} one lower), so the end-to-end test sees the client's clean resubscribe; and drop
 * the current connection (the client sees a close 1006, as after a network drop).
 */
final class TamperingTransport implements Transport {
    private final Transport inner;
    private volatile String tamper;
    private volatile Runnable dropCurrent = () -> {};

    TamperingTransport(Transport inner) {
        this.inner = inner;
    }

    void tamperNext(String field) {
        tamper = field;
    }

    /** Ends the current connection as a network drop would: the client gets 1006, the hub a vanished peer. */
    void drop() {
        dropCurrent.run();
    }

    @Override
    public TransportConnection open(TransportRequest request, TransportListener listener) {
        AtomicBoolean closed = new AtomicBoolean();
        TransportConnection connection = inner.open(request, new TransportListener() {
            @Override
            public void onOpen() {
                if (!closed.get()) listener.onOpen();
            }

            @Override
            public void onText(String text) {
                if (!closed.get()) listener.onText(spoiled(text));
            }

            @Override
            public void onClosed(int code, String reason) {
                if (closed.compareAndSet(false, true)) listener.onClosed(code, reason);
            }
        });
        dropCurrent = () -> {
            connection.abandon();
            if (closed.compareAndSet(false, true)) listener.onClosed(1006, "dropped by the test");
        };
        return connection;
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
