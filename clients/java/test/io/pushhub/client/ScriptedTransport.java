package io.pushhub.client;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A transport the test plays the hub through: each {@code open} is recorded with its listener;
 * the test calls {@code onOpen}/{@code onText}/{@code onClosed} and reads what the client sent.
 */
final class ScriptedTransport implements Transport {
    /** One connection the client opened. */
    static final class Connection implements TransportConnection {
        final TransportRequest request;
        final TransportListener listener;
        final List<String> sent = new CopyOnWriteArrayList<>();
        volatile Integer closedWith;
        volatile boolean abandoned;

        Connection(TransportRequest request, TransportListener listener) {
            this.request = request;
            this.listener = listener;
        }

        /** The socket is closing: it takes no message ({@code send} is false; each is kept in {@code refused}). */
        volatile boolean refuses;
        final List<String> refused = new CopyOnWriteArrayList<>();

        @Override
        public boolean send(String text) {
            if (refuses) {
                refused.add(Json.parse(text).canonical());
                return false;
            }
            sent.add(Json.parse(text).canonical());
            return true;
        }

        @Override
        public void close(int code, String reason) { closedWith = code; }

        @Override
        public void abandon() { abandoned = true; }

        /** The hub's side: a message. */
        void hub(String json) { listener.onText(json); }

        boolean hasSent(String canonical) { return sent.contains(canonical); }
    }

    final List<Connection> connections = new CopyOnWriteArrayList<>();

    @Override
    public TransportConnection open(TransportRequest request, TransportListener listener) {
        Connection connection = new Connection(request, listener);
        connections.add(connection);
        return connection;
    }

    Connection last() { return connections.get(connections.size() - 1); }
}
