package io.pushhub.client;

import java.util.concurrent.CompletableFuture;

/**
 * What {@link PushHub} needs from the network, behind a small interface so that each platform
 * plugs in its own: {@link JdkWebSocketTransport} ({@code java.net.http}, the JVM) ships in this
 * jar, {@code io.pushhub.client.okhttp.OkHttpTransport} (Android) in pushhub-client-okhttp.jar.
 * The twin of Sources/PushHubClient/Transport.swift.
 *
 * <p>Contract: for each {@link #open}, the listener is called in order: at most one
 * {@code onOpen}, then {@code onText} for each whole text message (fragments reassembled), then
 * exactly one {@code onClosed} (also when the connection never opened, or was closed or abandoned
 * by the client), and nothing after {@code onClosed}. Calls may come from any thread, one at a
 * time per connection; the client serializes them. The transport answers pings itself.
 */
public interface Transport {
    /** Opens a WebSocket to {@code request.uri()} offering {@code request.subprotocol()}; never blocks. */
    TransportConnection open(TransportRequest request, TransportListener listener);

    /**
     * One HTTP GET of {@code request.uri()} with its headers (for {@link PushHub#fetchScreen}):
     * completes with the answer whatever its status, or exceptionally when there was no answer.
     * The default has no HTTP: it fails.
     */
    default CompletableFuture<HttpAnswer> get(TransportRequest request) {
        CompletableFuture<HttpAnswer> failed = new CompletableFuture<>();
        failed.completeExceptionally(new UnsupportedOperationException(
                getClass().getSimpleName() + " does not do HTTP; fetchScreen needs a transport that does"));
        return failed;
    }
}
