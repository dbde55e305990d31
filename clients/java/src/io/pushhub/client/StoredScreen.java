package io.pushhub.client;

import java.util.Collections;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * A screen as stored: its tree, version and hash, the experiment variants that shaped it, and the
 * epoch they count in ({@code null}: stored before any session of this user named one). The
 * variants are kept so that a patch after a restart, which names them only when they change,
 * leaves them right. Immutable.
 */
final class StoredScreen {
    final Json tree;
    final long version;
    final String hash;
    final String epoch;
    final Map<String, String> variants;

    StoredScreen(Json tree, long version, String hash, String epoch, Map<String, String> variants) {
        this.tree = tree;
        this.version = version;
        this.hash = hash;
        this.epoch = epoch;
        this.variants = Collections.unmodifiableMap(new TreeMap<>(variants));
    }

    /**
     * {@code {"epoch","hash","tree","variants","version"}} in canonical member order around the
     * tree's canonical text, the JavaScript and Swift clients' form; {@code variants} only when
     * there are some.
     */
    static String form(String epoch, String canonicalTree, long version, String hash, Map<String, String> variants) {
        StringBuilder out = new StringBuilder("{");
        if (epoch != null) out.append("\"epoch\":").append(Json.of(epoch)).append(',');
        out.append("\"hash\":").append(Json.of(hash)).append(",\"tree\":").append(canonicalTree);
        if (!variants.isEmpty()) out.append(",\"variants\":").append(Fields.json(new TreeMap<>(variants)).canonical());
        return out.append(",\"version\":").append(version).append('}').toString();
    }

    /**
     * The screen stored as {@code text} if its tree still hashes to its hash; {@code null}
     * otherwise (then it is dropped).
     */
    static StoredScreen parse(String text) {
        try {
            Json value = Json.parse(text, JsonReader.HUB_MAX_DEPTH);
            Json tree = Fields.member(value, "tree");
            Long version = Fields.integer(value, "version");
            String hash = Fields.string(value, "hash");
            if (tree == null || version == null || hash == null || !ScreenHash.of(tree).equals(hash)) return null;
            return new StoredScreen(tree, version, hash, Fields.string(value, "epoch"),
                    Fields.variantsOrNone(Fields.member(value, "variants")));
        } catch (JsonException e) {
            return null;
        }
    }

    @Override
    public boolean equals(Object other) {
        if (!(other instanceof StoredScreen)) return false;
        StoredScreen s = (StoredScreen) other;
        return tree.equals(s.tree) && version == s.version && hash.equals(s.hash) && Objects.equals(epoch, s.epoch)
                && variants.equals(s.variants);
    }

    @Override
    public int hashCode() { return Objects.hash(version, hash, epoch); }

    @Override
    public String toString() { return "StoredScreen(v" + version + " " + hash + " epoch " + epoch + ")"; }
}
