package io.pushhub.client;

import java.util.Collections;
import java.util.Map;
import java.util.TreeMap;

/** A screen fetched over HTTP ({@link PushHub#fetchScreen}, DESIGN §12). Immutable. */
public final class FetchedScreen {
    private final String screen;
    private final Json tree;
    private final long version;
    private final String hash;
    private final Map<String, String> variants;
    private final int status;

    FetchedScreen(String screen, Json tree, long version, String hash, Map<String, String> variants, int status) {
        this.screen = screen;
        this.tree = tree;
        this.version = version;
        this.hash = hash;
        this.variants = Collections.unmodifiableMap(new TreeMap<>(variants));
        this.status = status;
    }

    public String screen() { return screen; }

    public Json tree() { return tree; }

    public long version() { return version; }

    public String hash() { return hash; }

    /** The experiments that shaped the tree (experiment key → variant key). */
    public Map<String, String> variants() { return variants; }

    /** 200: a new tree (its hash checked, now in storage); 304: the held or stored tree is current. */
    public int status() { return status; }
}
