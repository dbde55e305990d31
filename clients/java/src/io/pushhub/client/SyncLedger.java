package io.pushhub.client;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The syncs of one user in one hub state (DESIGN §5): ids seen (to drop a duplicate, e.g. a replay
 * after a reconnect), syncs handed to the shell that wait for the app (their jitter, then the
 * app's listeners), and {@code lastSync}. Pure. The twin of clients/js/src/sync-ledger.js.
 *
 * <p>Invariants: {@code lastSync} never passes a sync that was received but not yet handled: a
 * restart during a jitter wait gets that sync again (deduped by id while the process lives). At
 * most {@link #REMEMBERED} ids are remembered, the newest. A sync from a push (DESIGN §17) never
 * moves {@code lastSync}: only the socket's copy of it does (then deduped), so syncs the socket
 * missed are still replayed. Each id is handed over once, whichever way it came.
 */
final class SyncLedger {
    /** How many sync ids are remembered for dedupe. */
    static final int REMEMBERED = 1024;
    /** How many ids of handled syncs are kept in storage ({@code <scope>:syncs}), across restarts. */
    static final int HANDLED = 64;

    /** A sync handed to the shell; it comes back to {@link #handled} once the app is done with it. */
    static final class Waiting {
        final String id;
        Long seq;
        boolean forgotten;

        Waiting(String id, Long seq) {
            this.id = id;
            this.seq = seq;
        }
    }

    private Long lastSync;
    /** The highest seq seen; {@code lastSync} lags it while syncs wait. */
    private Long max;
    private final Set<String> seen = new HashSet<>();
    private final ArrayDeque<String> seenOrder = new ArrayDeque<>();
    /** Waiting records with a null seq and not forgotten came from a push the socket has not brought. */
    private final Map<String, Waiting> waiting = new LinkedHashMap<>();
    private final ArrayDeque<String> handledIds = new ArrayDeque<>();

    SyncLedger(Long lastSync) {
        this.lastSync = lastSync;
        this.max = lastSync;
    }

    /** The last sync seq every sync up to which was handed to the app ({@code hello.last_sync}). */
    Long lastSync() { return lastSync; }

    /**
     * Another user or hub state, whose last_sync is {@code lastSync}: the ids seen are forgotten
     * (another state numbers its own from 1 again), and the syncs still waiting are handed to the
     * app when their wait ends but never acked, nor bound last_sync here.
     */
    void reset(Long lastSync) {
        reset(lastSync, java.util.Collections.emptyList());
    }

    /** {@link #reset(Long)}, taking the ids of the syncs handled last (oldest first, as stored) as seen. */
    void reset(Long lastSync, List<String> handled) {
        seen.clear();
        seenOrder.clear();
        handledIds.clear();
        for (String id : handled.subList(Math.max(0, handled.size() - HANDLED), handled.size())) {
            handledIds.addLast(id);
            if (seen.add(id)) seenOrder.addLast(id);
        }
        for (Waiting w : waiting.values()) {
            w.forgotten = true;
            w.seq = null;
        }
        this.lastSync = lastSync;
        this.max = lastSync;
    }

    /** The welcome's {@code sync_seq}: where a client with no last_sync starts counting. */
    void welcomed(Long syncSeq) {
        if (max == null && syncSeq != null) max = syncSeq;
    }

    /** A sync arrived: its waiting record, or {@code null} for an id seen already. */
    Waiting received(String id, Long seq) {
        if (!seen.add(id)) {
            // Seen in a push (or handled before a restart): last_sync may pass it now, or once the
            // app returns for a push still waiting.
            Waiting pushed = waiting.get(id);
            if (pushed != null && pushed.seq == null && !pushed.forgotten) pushed.seq = seq;
            if (seq != null && (max == null || max < seq)) max = seq;
            return null;
        }
        seenOrder.addLast(id);
        if (seenOrder.size() > REMEMBERED) seen.remove(seenOrder.removeFirst());
        if (seq != null && (max == null || max < seq)) max = seq;
        Waiting record = new Waiting(id, seq);
        waiting.put(id, record);
        return record;
    }

    /**
     * The app's listeners returned for {@code record}: whether to ack it (not when it was reset or
     * replaced meanwhile).
     */
    boolean handled(Waiting record) {
        if (waiting.get(record.id) != record) return false;
        waiting.remove(record.id);
        if (record.forgotten) return false;
        handledIds.addLast(record.id);
        if (handledIds.size() > HANDLED) handledIds.removeFirst();
        return true;
    }

    /** A sync came in a push: its waiting record (it holds last_sync back only once the socket brings it too), or null for an id seen already. */
    Waiting pushed(String id) {
        if (!seen.add(id)) return null;
        seenOrder.addLast(id);
        if (seenOrder.size() > REMEMBERED) seen.remove(seenOrder.removeFirst());
        Waiting record = new Waiting(id, null);
        waiting.put(id, record);
        return record;
    }

    /** The ids of the last {@link #HANDLED} syncs handled, oldest first. */
    List<String> handledIds() { return new ArrayList<>(handledIds); }

    /**
     * Moves {@code lastSync} to the highest seq below which nothing waits (a replay below it, after
     * a first welcome or a reset, lowers it until handled). Returns whether it changed.
     */
    boolean settle() {
        Long value = max;
        for (Waiting w : waiting.values()) {
            if (w.seq != null && value != null && w.seq - 1 < value) value = w.seq - 1;
        }
        if (java.util.Objects.equals(value, lastSync)) return false;
        lastSync = value;
        return true;
    }
}
