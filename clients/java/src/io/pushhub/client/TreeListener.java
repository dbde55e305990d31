package io.pushhub.client;

/**
 * Gets each new tree of a subscribed screen ({@link PushHub#subscribe}): first the stored one
 * ({@code CACHE}) when there is one, then each version the hub sends. Called on the listener
 * executor. It may throw: for a tree the hub sent (any source but {@code CACHE}) the client then
 * reports a {@code render_error} for that version (DESIGN §15) instead of {@code rendered}; the
 * screen's other listeners still run.
 */
@FunctionalInterface
public interface TreeListener {
    void onTree(Json tree, TreeMeta meta) throws Exception;
}
