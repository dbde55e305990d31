package io.pushhub.client;

/**
 * A tree with its RFC 8785 canonical text and its hash (DESIGN §4), both from one canonical
 * pass: the client checks the hash of every tree it builds and stores the same canonical text,
 * so it writes the tree once, not twice. Immutable.
 *
 * <p>Invariant: {@code hash.equals(ScreenHash.of(tree))} and {@code canonical.equals(tree.canonical())}.
 */
final class HashedTree {
    final String canonical;
    final String hash;

    private HashedTree(String canonical, String hash) {
        this.canonical = canonical;
        this.hash = hash;
    }

    static HashedTree of(Json tree) {
        JsonWriter writer = JsonWriter.canonicalUtf8(tree);
        return new HashedTree(writer.text(), ScreenHash.of(writer.buffer(), writer.size()));
    }
}
