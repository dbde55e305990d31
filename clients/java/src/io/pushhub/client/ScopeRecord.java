package io.pushhub.client;

import java.util.Objects;

/**
 * A scope's record ({@code <scope>:epoch}): the hub state ({@code welcome.epoch}) its screens and
 * {@code last_sync} were counted in. Unreadable is as good as absent: a fresh start. Immutable.
 */
final class ScopeRecord {
    static final ScopeRecord EMPTY = new ScopeRecord(null, null);

    final String epoch;
    final Long lastSync;

    ScopeRecord(String epoch, Long lastSync) {
        this.epoch = epoch;
        this.lastSync = lastSync;
    }

    /** The record stored as {@code text} ({@code null}: none). */
    static ScopeRecord parse(String text) {
        if (text == null) return EMPTY;
        try {
            Json value = Json.parse(text);
            String epoch = Fields.string(value, "epoch");
            return epoch == null ? EMPTY : new ScopeRecord(epoch, Fields.integer(value, "last_sync"));
        } catch (JsonException e) {
            return EMPTY;
        }
    }

    /** {@code {"epoch":…,"last_sync":…}} (canonical member order), the other clients' form too. */
    String stored() {
        return lastSync == null ? Fields.object("epoch", epoch).toString()
                : Fields.object("epoch", epoch, "last_sync", lastSync).toString();
    }

    @Override
    public boolean equals(Object other) {
        if (!(other instanceof ScopeRecord)) return false;
        ScopeRecord r = (ScopeRecord) other;
        return Objects.equals(epoch, r.epoch) && Objects.equals(lastSync, r.lastSync);
    }

    @Override
    public int hashCode() { return Objects.hash(epoch, lastSync); }

    @Override
    public String toString() { return "ScopeRecord(" + epoch + ", " + lastSync + ")"; }
}
