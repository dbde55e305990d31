package io.pushhub.client;

import java.util.Collections;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * What came with a tree (DESIGN §3): its version, the hub's hash of it (RFC 8785 + SHA-256, checked
 * by the client for every tree it built from a patch), where it came from, and the experiment
 * variants that shaped it. Immutable; {@code variants} is an unmodifiable sorted map.
 */
public final class TreeMeta {
    /** Where a tree came from. */
    public enum Source {
        /** From storage, before the hub confirmed it. */
        CACHE,
        SNAPSHOT,
        PATCH,
        /** The hub confirmed that the held tree is current. */
        UNCHANGED
    }

    private final long version;
    private final String hash;
    private final Source source;
    private final Long from;
    private final Json patch;
    private final Map<String, String> variants;

    TreeMeta(long version, String hash, Source source, Long from, Json patch, Map<String, String> variants) {
        this.version = version;
        this.hash = hash;
        this.source = source;
        this.from = from;
        this.patch = patch;
        this.variants = Collections.unmodifiableMap(new TreeMap<>(variants));
    }

    TreeMeta(long version, String hash, Source source, Map<String, String> variants) {
        this(version, hash, source, null, null, variants);
    }

    public long version() { return version; }

    public String hash() { return hash; }

    public Source source() { return source; }

    /** For {@code PATCH}: the version it applied to; else {@code null}. */
    public Long from() { return from; }

    /** For {@code PATCH}: its RFC 6902 operations (to animate a change); else {@code null}. */
    public Json patch() { return patch; }

    /**
     * The running experiments that shaped this tree for this client, experiment key → variant key
     * (DESIGN §6); empty when none did.
     */
    public Map<String, String> variants() { return variants; }

    @Override
    public boolean equals(Object other) {
        if (!(other instanceof TreeMeta)) return false;
        TreeMeta m = (TreeMeta) other;
        return version == m.version && hash.equals(m.hash) && source == m.source && Objects.equals(from, m.from)
                && Objects.equals(patch, m.patch) && variants.equals(m.variants);
    }

    @Override
    public int hashCode() { return Objects.hash(version, hash, source, from, variants); }

    @Override
    public String toString() {
        return "TreeMeta(v" + version + " " + source + " " + hash + (from == null ? "" : " from " + from)
                + (variants.isEmpty() ? "" : " " + variants) + ")";
    }
}
