package io.pushhub.client;

import java.util.Objects;

/** The hub's {@code welcome}: a session started (DESIGN §3). Immutable. */
public final class Welcome implements ClientEvent {
    private final String session;
    private final String user;
    private final int heartbeatSeconds;
    private final long syncSeq;
    private final String epoch;

    Welcome(String session, String user, int heartbeatSeconds, long syncSeq, String epoch) {
        this.session = session;
        this.user = user;
        this.heartbeatSeconds = heartbeatSeconds;
        this.syncSeq = syncSeq;
        this.epoch = epoch;
    }

    public String session() { return session; }

    /** The signed-in user ({@code null}: anonymous). */
    public String user() { return user; }

    /** The hub sends something (a {@code heartbeat} when it has nothing else) at least this often. */
    public int heartbeatSeconds() { return heartbeatSeconds; }

    public long syncSeq() { return syncSeq; }

    /** The identity of the hub's state: versions and sync seqs count within it ({@code null} from older hubs). */
    public String epoch() { return epoch; }

    @Override
    public void deliverTo(ClientListener listener) { listener.onWelcome(this); }

    @Override
    public boolean equals(Object other) {
        if (!(other instanceof Welcome)) return false;
        Welcome w = (Welcome) other;
        return session.equals(w.session) && Objects.equals(user, w.user) && heartbeatSeconds == w.heartbeatSeconds
                && syncSeq == w.syncSeq && Objects.equals(epoch, w.epoch);
    }

    @Override
    public int hashCode() { return Objects.hash(session, user, heartbeatSeconds, syncSeq, epoch); }

    @Override
    public String toString() {
        return "Welcome(session=" + session + ", user=" + user + ", heartbeat_s=" + heartbeatSeconds + ", sync_seq="
                + syncSeq + ", epoch=" + epoch + ")";
    }
}
