package io.pushhub.client;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * The client side of protocol v1 as a state machine (DESIGN §3–§5, §12): app calls and hub
 * messages in, {@link SessionAction}s out; no sockets, threads, clocks or storage of its own
 * ({@code nowMs} is a parameter, stored values come in as arguments), so every rule is unit-tested
 * by feeding it messages. {@link PushHub} drives it on one thread. The Java twin of
 * Sources/PushHubClient/ClientSession.swift and clients/js/src/client-session.js.
 *
 * <p>Invariants:
 * <ul>
 * <li>Everything it reads or stores is in one user's {@code scope}, and a stored tree or
 *   {@code last_sync} is used only in the hub state ({@code epoch}) it was counted in: another
 *   user's or another epoch's tree is never delivered or sent as {@code have} (subscribes go out
 *   only after the welcome has named the epoch).
 * <li>A screen's {@code version}/{@code hash} are set only together with a tree that hashes to
 *   {@code hash} (or the hub's snapshot, whose hash the hub vouches for); a patch applies only to
 *   the version it says it is {@code from}, else the screen is resubscribed without {@code have}
 *   and later patches are ignored until the snapshot ({@code resyncing}).
 * <li>{@code lastSync} never passes a sync that was received but not yet handed to the app
 *   ({@link SyncLedger}).
 * <li>A screen's {@code variants} are those of the rendition its {@code hash} is of: set with every
 *   snapshot and {@code unchanged}, replaced by a patch that names them, stored with the tree.
 * <li>{@code track} events wait only while not live (or after the socket refused them), at most
 *   {@link #MAX_QUEUED_TRACKS} of them (the newest), and are sent only in the scope (user) they
 *   were made in; none waits once the client has {@code ended}.
 * <li>While not live, at most one render report ({@code rendered} or {@code render_error}) per
 *   screen is owed: the latest made; what the socket refused ({@link #unsent}) is owed the same
 *   way. Owed reports and acks go after the next welcome, in the scope and hub state they were
 *   made in only.
 * </ul>
 */
final class ClientSession {
    /** One subscribed screen. */
    static final class Entry {
        Json tree;
        Long version;
        String hash;
        /** The experiments that shaped the held tree: experiment key → variant key. */
        Map<String, String> variants = Collections.emptyMap();
        /** The version last handed to listeners. */
        Long delivered;
        /** The version in storage. */
        Long stored;
        /** A subscribe without {@code have} is outstanding: patches cannot apply until its snapshot. */
        boolean resyncing;
        /** The hub said {@code pending}: the screen has no version yet; its first publish brings a snapshot. */
        boolean pending;
    }

    static final int PROTOCOL = 1;
    /** {@code track} events kept while not connected; beyond it the oldest goes (docs/clients.md). */
    static final int MAX_QUEUED_TRACKS = 100;

    private final String platform;
    private final String appVersion;
    /** What this build renders, for the hello; {@code null}: not declared. */
    private final Map<String, Integer> components;
    private final Map<String, Entry> screens = new TreeMap<>();
    private boolean live;
    private StorageScope scope;
    private String epoch;
    private final LinkLiveness liveness = new LinkLiveness();
    private final SyncLedger syncs;
    private final List<String> pendingSubscribes = new ArrayList<>();
    /** The latest {@code rendered} or {@code render_error} made per screen while not live, oldest screen first. */
    private final Map<String, Json> owedReports = new LinkedHashMap<>();
    private final LinkedHashSet<String> pendingAcks = new LinkedHashSet<>();
    private final ClientStats stats = new ClientStats();
    private final java.util.ArrayDeque<Track> pendingTracks = new java.util.ArrayDeque<>();
    /** The client was closed for good ({@code close()}, or a refusal reconnecting cannot fix). */
    private boolean ended;
    /** The device's push token (null: none), sent after every welcome. */
    private PushToken pushToken;
    /** The token was removed while not live: {@code "token":null} goes after the next welcome. */
    private boolean owesPushTokenRemoval;

    /** A session in {@code scope} whose storage holds {@code record} (its epoch and {@code last_sync}). */
    ClientSession(String platform, String appVersion, Map<String, Integer> components, StorageScope scope,
            ScopeRecord record) {
        this.platform = platform;
        this.appVersion = appVersion;
        this.components = components == null ? null : Collections.unmodifiableMap(new TreeMap<>(components));
        this.scope = scope;
        this.epoch = record.epoch;
        this.syncs = new SyncLedger(record.lastSync);
    }

    boolean isLive() { return live; }

    StorageScope scope() { return scope; }

    String epoch() { return epoch; }

    Long lastSync() { return syncs.lastSync(); }

    ClientStats stats() { return stats; }

    LinkLiveness liveness() { return liveness; }

    Map<String, Integer> components() { return components; }

    /** The subscribed screens (read only). */
    Map<String, Entry> screens() { return Collections.unmodifiableMap(screens); }

    /**
     * The tree held for {@code screen} with its version and hash ({@code null} when none, or while
     * a resubscribe waits).
     */
    StoredScreen held(String screen) {
        Entry entry = screens.get(screen);
        if (entry == null || entry.tree == null || entry.version == null || entry.hash == null) return null;
        return new StoredScreen(entry.tree, entry.version, entry.hash, epoch, entry.variants);
    }

    /**
     * Whether {@code entry} (what {@link #screens()} held for {@code screen} when a tree was
     * handed over) is still the screen's, holding {@code version}: a render report is made only
     * then (not for a version replaced meanwhile, nor a screen unsubscribed, resubscribed or
     * dropped).
     */
    boolean holds(String screen, Entry entry, long version) {
        return entry != null && screens.get(screen) == entry && entry.version != null && entry.version == version;
    }

    /** Whether a stored screen may be shown and sent as {@code have}: it was stored in the epoch this scope is in. */
    boolean isCurrent(StoredScreen stored) { return stored.epoch != null && stored.epoch.equals(epoch); }

    // MARK: - App calls

    /**
     * Starts following {@code screen}, from {@code stored} (what storage holds for it, hash
     * checked) when it is of this scope's epoch; otherwise that entry is removed.
     */
    List<SessionAction> subscribe(String screen, StoredScreen stored) {
        if (screens.containsKey(screen)) return Collections.emptyList();
        Entry entry = new Entry();
        List<SessionAction> actions = start(screen, entry, stored);
        screens.put(screen, entry);
        if (live) actions.add(subscribeMessage(screen, entry));
        return actions;
    }

    /** Holds and delivers {@code stored} as the cache of {@code screen} if current, else drops it from storage. */
    private List<SessionAction> start(String screen, Entry entry, StoredScreen stored) {
        List<SessionAction> actions = new ArrayList<>();
        if (stored == null) return actions;
        if (!isCurrent(stored)) {
            storeScreen(actions, screen, null);
            return actions;
        }
        entry.tree = stored.tree;
        entry.version = stored.version;
        entry.hash = stored.hash;
        entry.variants = stored.variants;
        entry.stored = stored.version;
        TreeMeta meta = new TreeMeta(stored.version, stored.hash, TreeMeta.Source.CACHE, stored.variants);
        actions.add(SessionAction.deliver(screen, stored.tree, meta));
        return actions;
    }

    /**
     * Makes {@code newScope} the user whose storage the session uses (the token now names another
     * user): its {@code record}, and for each subscribed screen its {@code stored} tree when
     * current. What was held for the previous user is forgotten, never delivered or sent as
     * {@code have} for this one.
     */
    List<SessionAction> enter(StorageScope newScope, ScopeRecord record, Map<String, StoredScreen> stored) {
        return enter(newScope, record, Collections.emptyList(), stored);
    }

    /** {@link #enter(StorageScope, ScopeRecord, Map)} with the ids of the syncs the scope handled last (oldest first). */
    List<SessionAction> enter(StorageScope newScope, ScopeRecord record, List<String> handled,
            Map<String, StoredScreen> stored) {
        List<SessionAction> actions = new ArrayList<>();
        if (newScope.equals(scope)) return actions;
        // Events queued for another user are that user's: never sent signed in as this one
        // (those queued before any user was known are this one's).
        if (!scope.equals(StorageScope.NONE)) dropTracks();
        scope = newScope;
        epoch = record.epoch;
        forgetOwed();
        syncs.reset(record.lastSync, handled);
        for (String screen : new ArrayList<>(screens.keySet())) {
            Entry entry = new Entry();
            actions.addAll(start(screen, entry, stored.get(screen)));
            screens.put(screen, entry);
        }
        return actions;
    }

    /** Stops following {@code screen} (its stored tree stays for the next subscribe). */
    List<SessionAction> unsubscribe(String screen) {
        if (screens.remove(screen) == null || !live) return Collections.emptyList();
        return one(SessionAction.send(Fields.object("type", "unsubscribe", "screen", screen)));
    }

    /** The app drew {@code version} of {@code screen} (confirms experiment exposures, DESIGN §6). */
    List<SessionAction> rendered(String screen, long version) {
        return sendReport(screen, Fields.object("type", "rendered", "screen", screen, "version", version));
    }

    /**
     * The app could not draw {@code version} of {@code screen} (DESIGN §15): a {@code render_error}
     * of {@code report} with {@code hash} ({@code null}: the held tree's, when it is that version).
     */
    List<SessionAction> renderFailed(String screen, long version, RenderErrorReport report, String hash) {
        Entry entry = screens.get(screen);
        String held = entry != null && entry.version != null && entry.version == version ? entry.hash : null;
        return sendReport(screen, report.message(screen, version, hash != null ? hash : held));
    }

    /** Sends a render report while live; otherwise owes it, replacing the one owed for {@code screen}. */
    private List<SessionAction> sendReport(String screen, Json message) {
        if (live) return one(SessionAction.send(message));
        owedReports.remove(screen);
        owedReports.put(screen, message);
        return Collections.emptyList();
    }

    /**
     * The app reports a goal event: sent now when live, else kept (the newest
     * {@link #MAX_QUEUED_TRACKS}) and sent after the next welcome; dropped once ended.
     */
    List<SessionAction> track(Track track) {
        if (ended || !live) {
            queueTrack(track);
            return Collections.emptyList();
        }
        stats.tracks++;
        return one(SessionAction.send(track.message()));
    }

    /** Keeps {@code track} for the next welcome (the newest {@link #MAX_QUEUED_TRACKS}); drops it once ended. */
    private void queueTrack(Track track) {
        if (ended) {
            stats.droppedTracks++;
            return;
        }
        pendingTracks.addLast(track);
        while (pendingTracks.size() > MAX_QUEUED_TRACKS) {
            pendingTracks.removeFirst();
            stats.droppedTracks++;
        }
    }

    /**
     * The socket could not take {@code message} (it is closing, or there is none; the JavaScript
     * client's {@code unsent}): an ack, a {@code track} or a render report is owed until the next
     * welcome, as if it had been made while not live; anything else is made anew on the next
     * connection (hello, subscribes) or needs no resend (unsubscribe).
     */
    void unsent(Json message) {
        String type = Objects.toString(Fields.string(message, "type"), "");
        switch (type) {
            case "ack":
                String id = Fields.string(message, "sync");
                if (id != null) pendingAcks.add(id);
                return;
            case "track":
                stats.tracks--; // counted when it was handed to the socket
                Json value = Fields.member(message, "value");
                queueTrack(new Track(Fields.string(message, "event"), value == null ? null : value.asDouble()));
                return;
            case "rendered":
            case "render_error":
                String screen = Fields.string(message, "screen");
                owedReports.remove(screen);
                owedReports.put(screen, message);
                return;
            default:
                return;
        }
    }

    /** The client will not connect again: {@code track} events waiting, and those made later, are dropped. */
    void end() {
        closed();
        ended = true;
        dropTracks();
    }

    private void dropTracks() {
        stats.droppedTracks += pendingTracks.size();
        pendingTracks.clear();
    }

    /** The app's listeners returned for a scheduled sync: ack it and advance {@code lastSync}. */
    List<SessionAction> syncHandled(SyncLedger.Waiting waiting) {
        if (!syncs.handled(waiting)) return Collections.emptyList();
        List<SessionAction> actions = saveLastSync(false);
        if (!scope.equals(StorageScope.NONE)) {
            List<Json> ids = new ArrayList<>();
            for (String id : syncs.handledIds()) ids.add(Json.of(id));
            actions.add(SessionAction.store(scope.handledSyncsKey(), Json.array(ids).toString()));
        }
        if (live) {
            actions.add(SessionAction.send(ack(waiting.id)));
        } else {
            pendingAcks.add(waiting.id);
        }
        return actions;
    }

    /**
     * The app set (or with null, removed) the device's push token: stored, and sent now when live
     * (else after the next welcome). Setting the token held changes nothing.
     */
    List<SessionAction> setPushToken(PushToken token) {
        List<SessionAction> actions = new ArrayList<>();
        if (Objects.equals(token, pushToken)) return actions;
        boolean hadToken = pushToken != null;
        pushToken = token;
        owesPushTokenRemoval = false;
        actions.add(SessionAction.store(StorageScope.PUSH_TOKEN_KEY, token == null ? null : token.message().toString()));
        if (token != null) {
            if (live) actions.add(SessionAction.send(token.message()));
        } else if (hadToken) {
            if (live) {
                actions.add(SessionAction.send(PushToken.removal()));
            } else {
                owesPushTokenRemoval = true;
            }
        }
        return actions;
    }

    /**
     * A silent push brought {@code message}, a sync object (DESIGN §17): scheduled at once (no
     * jitter: the app runs briefly in the background) unless its id was seen already (then
     * nothing). It does not move {@code lastSync}: the socket's copy of it does.
     */
    List<SessionAction> pushed(Json message) {
        List<SessionAction> actions = new ArrayList<>();
        String id = Fields.string(message, "id");
        if (id == null) return actions;
        SyncLedger.Waiting waiting = syncs.pushed(id);
        if (waiting == null) {
            stats.duplicateSyncs++;
            return actions;
        }
        stats.pushedSyncs++;
        actions.add(SessionAction.schedule(notification(message, id, 0), waiting));
        return actions;
    }

    // MARK: - Connection

    /** A connection is being made: from now on it must bring something within the liveness limit. */
    void connecting(long nowMs) { liveness.connecting(nowMs); }

    /** The socket opened: the hello (asking for heartbeats; with the epoch {@code last_sync} was counted in). */
    List<SessionAction> opened(String token, String device) {
        stats.connects++;
        Map<String, Object> hello = new LinkedHashMap<>();
        hello.put("type", "hello");
        hello.put("protocol", PROTOCOL);
        hello.put("heartbeat", true);
        if (token != null) hello.put("token", token);
        if (device != null) hello.put("device", device);
        if (platform != null || appVersion != null) {
            Map<String, Object> app = new LinkedHashMap<>();
            if (platform != null) app.put("platform", platform);
            if (appVersion != null) app.put("version", appVersion);
            hello.put("app", app);
        }
        if (components != null) hello.put("components", ComponentCapabilities.json(components));
        if (epoch != null) hello.put("epoch", epoch);
        if (syncs.lastSync() != null) hello.put("last_sync", syncs.lastSync());
        return one(SessionAction.send(Fields.json(hello)));
    }

    /** Checks the link at {@code nowMs} (when the timer armed for the liveness deadline fires). */
    LinkCheck checkLink(long nowMs) {
        Long deadline = liveness.deadlineMs();
        if (deadline == null) return LinkCheck.closed();
        if (!liveness.isDead(nowMs)) return LinkCheck.alive(deadline);
        stats.deadLinks++;
        return LinkCheck.dead(liveness.silenceMs(nowMs));
    }

    /** The socket closed (or was given up): what was in flight on it is void. */
    void closed() {
        live = false;
        pendingSubscribes.clear();
        liveness.closed();
    }

    // MARK: - Hub messages

    /** Something arrived on the connection (any text, JSON or not): the link is alive. */
    void heard(long nowMs) { liveness.heard(nowMs); }

    /** One message from the hub. */
    List<SessionAction> receive(Json message) {
        String type = Fields.string(message, "type");
        if (type == null) return Collections.emptyList();
        switch (type) {
            case "welcome":
                return welcome(message);
            case "heartbeat":
                return Collections.emptyList(); // it only proves the link is alive
            case "snapshot":
            case "patch":
            case "unchanged":
                return screenMessage(type, message);
            case "pending":
                return pending(message);
            case "gone":
                return gone(message);
            case "sync":
                return sync(message);
            case "error":
                return error(message);
            default:
                return Collections.emptyList(); // a newer hub's message: ignored (forward compatibility)
        }
    }

    private List<SessionAction> welcome(Json message) {
        Long heartbeat = Fields.integer(message, "heartbeat_s");
        Long syncSeq = Fields.integer(message, "sync_seq");
        String newEpoch = Fields.string(message, "epoch");
        Welcome welcome = new Welcome(Objects.toString(Fields.string(message, "session"), ""),
                Fields.string(message, "user"), heartbeat == null ? 0 : heartbeat.intValue(),
                syncSeq == null ? 0 : syncSeq, newEpoch);
        live = true;
        stats.welcomes++;
        // A hub that names no epoch predates heartbeats (both came in protocol v1's issue 24).
        liveness.welcomed(welcome.heartbeatSeconds(), newEpoch != null);
        List<SessionAction> actions = new ArrayList<>();
        boolean epochChanged = !Objects.equals(newEpoch, epoch);
        if (epochChanged && epoch != null) {
            // Another hub state (a reset data dir, another cluster): versions and sync seqs counted
            // in the old one mean nothing here. Nothing stored is sent as `have` or shown again.
            stats.epochChanges++;
            for (String screen : new ArrayList<>(screens.keySet())) {
                screens.put(screen, new Entry());
                storeScreen(actions, screen, null);
            }
            forgetOwed();
            if (!syncs.handledIds().isEmpty()) actions.add(SessionAction.store(scope.handledSyncsKey(), null));
            syncs.reset(null);
        }
        epoch = newEpoch;
        syncs.welcomed(syncSeq);
        actions.addAll(saveLastSync(epochChanged));
        actions.add(SessionAction.goLive(welcome));
        actions.add(SessionAction.emit(welcome));
        for (Map.Entry<String, Entry> screen : screens.entrySet()) {
            actions.add(subscribeMessage(screen.getKey(), screen.getValue()));
        }
        for (Json report : owedReports.values()) actions.add(SessionAction.send(report));
        owedReports.clear();
        for (String id : pendingAcks) actions.add(SessionAction.send(ack(id)));
        pendingAcks.clear();
        if (pushToken != null) {
            actions.add(SessionAction.send(pushToken.message()));
        } else if (owesPushTokenRemoval) {
            actions.add(SessionAction.send(PushToken.removal()));
        }
        owesPushTokenRemoval = false;
        // Last: after the subscribes, so that a unit is served its variant before its events
        // count (results count a goal only after the unit was served, DESIGN §6).
        for (Track track : pendingTracks) actions.add(SessionAction.send(track.message()));
        stats.tracks += pendingTracks.size();
        pendingTracks.clear();
        return actions;
    }

    private SessionAction subscribeMessage(String screen, Entry entry) {
        Json message;
        if (entry.version != null && entry.hash != null) {
            message = Fields.object("type", "subscribe", "screen", screen, "have",
                    Fields.object("version", entry.version, "hash", entry.hash));
        } else {
            entry.resyncing = true; // until a snapshot arrives, patches cannot apply
            message = Fields.object("type", "subscribe", "screen", screen);
        }
        pendingSubscribes.add(screen);
        return SessionAction.send(message);
    }

    /** The first answer to a subscribe of {@code screen} arrived. */
    private void answered(String screen) { pendingSubscribes.remove(screen); }

    /** The hub has no version of the screen yet: the subscription stays; what the client held of it is dropped. */
    private List<SessionAction> pending(Json message) {
        String screen = Fields.string(message, "screen");
        List<SessionAction> actions = new ArrayList<>();
        if (screen == null) return actions;
        answered(screen);
        Entry entry = screens.get(screen);
        if (entry == null) return actions;
        stats.pending++;
        if (entry.tree != null || entry.stored != null) {
            entry = new Entry();
            screens.put(screen, entry);
            storeScreen(actions, screen, null);
        }
        entry.pending = true;
        entry.resyncing = true; // only the snapshot can follow
        actions.add(SessionAction.pending(screen));
        return actions;
    }

    private List<SessionAction> gone(Json message) {
        String screen = Fields.string(message, "screen");
        List<SessionAction> actions = new ArrayList<>();
        if (screen == null) return actions;
        answered(screen);
        if (screens.remove(screen) == null) return actions;
        storeScreen(actions, screen, null);
        actions.add(SessionAction.emit(new Gone(screen)));
        return actions;
    }

    private List<SessionAction> screenMessage(String type, Json message) {
        String screen = Fields.string(message, "screen");
        Long version = Fields.integer(message, "version");
        String hash = Fields.string(message, "hash");
        List<SessionAction> actions = new ArrayList<>();
        if (screen == null || version == null || hash == null) return actions;
        answered(screen);
        Entry entry = screens.get(screen);
        if (entry == null) return actions; // unsubscribed meanwhile
        // Absent: none (snapshot, unchanged), or the same as before (patch).
        Json variants = Fields.member(message, "variants");
        switch (type) {
            case "snapshot": {
                stats.snapshots++;
                Json tree = Fields.member(message, "tree");
                if (tree == null) return actions; // not a snapshot (the hub always sends a tree): ignored, as JS does
                HashedTree hashed = HashedTree.of(tree);
                String actual = hashed.hash;
                if (!actual.equals(hash)) {
                    // The hub is the authority on the tree; differing hashes mean the two canonical
                    // forms disagree, and resubscribing would loop. Keep the hub's hash for `have`.
                    Mismatch mismatch = new Mismatch(screen, version, hash, actual, TreeMeta.Source.SNAPSHOT);
                    actions.add(SessionAction.emit(mismatch));
                }
                entry.resyncing = false;
                entry.pending = false;
                TreeMeta meta = new TreeMeta(version, hash, TreeMeta.Source.SNAPSHOT,
                        Fields.variantsOrNone(variants));
                actions.addAll(accept(entry, screen, tree, meta, hashed.canonical));
                return actions;
            }
            case "unchanged": {
                stats.unchanged++;
                if (entry.tree == null) return resubscribe(entry, screen, Resubscribe.Reason.NO_TREE, message);
                entry.resyncing = false;
                TreeMeta meta = new TreeMeta(version, hash, TreeMeta.Source.UNCHANGED,
                        Fields.variantsOrNone(variants));
                return accept(entry, screen, entry.tree, meta, null);
            }
            default: {
                stats.patches++;
                if (entry.resyncing) return actions; // sent before our resubscribe: the snapshot follows
                Long from = Fields.integer(message, "from");
                if (entry.tree == null || entry.version == null || !entry.version.equals(from)) {
                    return resubscribe(entry, screen, Resubscribe.Reason.UNEXPECTED_FROM, message);
                }
                Json ops = Fields.member(message, "ops");
                Json patched;
                try {
                    patched = JsonPatch.apply(entry.tree, ops == null ? Json.NULL : ops);
                } catch (JsonException | IllegalArgumentException | IllegalStateException e) {
                    return resubscribe(entry, screen, Resubscribe.Reason.PATCH_FAILED, message);
                }
                HashedTree hashed = HashedTree.of(patched);
                String actual = hashed.hash;
                if (!actual.equals(hash)) {
                    actions.add(SessionAction.emit(new Mismatch(screen, version, hash, actual, TreeMeta.Source.PATCH)));
                    actions.addAll(resubscribe(entry, screen, Resubscribe.Reason.HASH_MISMATCH, message));
                    return actions;
                }
                TreeMeta meta = new TreeMeta(version, hash, TreeMeta.Source.PATCH, entry.version, ops,
                        variants == null ? entry.variants : Fields.variantsOrNone(variants));
                return accept(entry, screen, patched, meta, hashed.canonical);
            }
        }
    }

    private List<SessionAction> resubscribe(Entry entry, String screen, Resubscribe.Reason reason, Json message) {
        stats.resubscribes++;
        Resubscribe event = new Resubscribe(screen, reason, entry.version, Fields.integer(message, "from"),
                Fields.integer(message, "version"));
        entry.version = null; // keep `tree` for the app until the snapshot replaces it
        entry.hash = null;
        List<SessionAction> actions = new ArrayList<>();
        actions.add(SessionAction.emit(event));
        if (live) actions.add(subscribeMessage(screen, entry));
        return actions;
    }

    /**
     * Holds {@code tree} as {@code meta.version} with {@code meta.variants}, stores it when what is
     * stored differs (another version; the same version rendered anew after an experiment changed,
     * or with other variants; from its {@code canonical} text when the caller has it), and hands
     * it over when it is new to the app.
     */
    private List<SessionAction> accept(Entry entry, String screen, Json tree, TreeMeta meta, String canonical) {
        List<SessionAction> actions = new ArrayList<>();
        boolean renditionChanged = !meta.hash().equals(entry.hash) || !meta.variants().equals(entry.variants);
        boolean snapshot = meta.source() == TreeMeta.Source.SNAPSHOT;
        boolean changed = !Objects.equals(entry.delivered, meta.version()) || snapshot || !tree.equals(entry.tree)
                || renditionChanged;
        entry.tree = tree;
        entry.version = meta.version();
        entry.hash = meta.hash();
        entry.variants = meta.variants();
        if (!Objects.equals(entry.stored, meta.version()) || snapshot || renditionChanged) {
            entry.stored = meta.version();
            String form = StoredScreen.form(epoch, canonical != null ? canonical : tree.canonical(), meta.version(),
                    meta.hash(), meta.variants());
            storeScreen(actions, screen, form);
        }
        if (!changed) return actions;
        entry.delivered = meta.version();
        actions.add(SessionAction.deliver(screen, tree, meta));
        return actions;
    }

    private List<SessionAction> sync(Json message) {
        stats.syncs++;
        String id = Fields.string(message, "id");
        List<SessionAction> actions = new ArrayList<>();
        if (id == null) return actions;
        Long seq = Fields.integer(message, "seq");
        SyncLedger.Waiting waiting = syncs.received(id, seq);
        if (waiting == null) {
            stats.duplicateSyncs++;
            return saveLastSync(false); // one seen in a push: last_sync may pass it now
        }
        Long jitter = Fields.integer(message, "jitter_ms");
        // A replay below last_sync (a first welcome, an epoch change) lowers it until handled.
        actions.addAll(saveLastSync(false));
        actions.add(SessionAction.schedule(notification(message, id, jitter == null ? 0 : Math.max(0, jitter)), waiting));
        return actions;
    }

    /** The app's view of a sync object (from the socket or a push), before its jitter wait. */
    private static SyncNotification notification(Json message, String id, long jitterMs) {
        Long seq = Fields.integer(message, "seq");
        return new SyncNotification(id, seq == null ? 0 : seq, Objects.toString(Fields.string(message, "reason"), ""),
                Objects.toString(Fields.string(message, "scope"), ""), Fields.member(message, "hint"),
                Json.TRUE.equals(Fields.member(message, "mandatory")), jitterMs, 0);
    }

    private List<SessionAction> error(Json message) {
        HubError error = new HubError(Objects.toString(Fields.string(message, "code"), "error"),
                Objects.toString(Fields.string(message, "message"), ""), Fields.string(message, "ref"), null);
        List<SessionAction> actions = new ArrayList<>();
        if ("subscribe".equals(error.ref()) && !pendingSubscribes.isEmpty()) {
            // A refused subscribe (unknown_screen, invalid_screen_name) did not subscribe: the entry
            // and its stored tree go, so subscribing again (once published) asks again.
            String screen = pendingSubscribes.remove(0);
            error = error.withScreen(screen);
            if (screens.remove(screen) != null) storeScreen(actions, screen, null);
        }
        if (error.code().equals("unsupported_protocol") || error.code().equals("unauthorized")) {
            actions.add(SessionAction.stopReconnecting(error));
        }
        actions.add(SessionAction.emit(error));
        return actions;
    }

    /**
     * {@code last_sync} = every sync up to it was handed to the app; stored with the epoch it
     * counts in ({@code force}: store the record although the value did not change — the epoch did).
     */
    private List<SessionAction> saveLastSync(boolean force) {
        List<SessionAction> actions = new ArrayList<>();
        if (!syncs.settle() && !force) return actions;
        // A hub without epochs: nothing to resume from later. No scope: no user's storage yet.
        if (epoch == null || scope.equals(StorageScope.NONE)) return actions;
        actions.add(SessionAction.store(scope.recordKey(), new ScopeRecord(epoch, syncs.lastSync()).stored()));
        return actions;
    }

    /** What is owed to one user in one hub state: acks, and render reports. */
    private void forgetOwed() {
        pendingAcks.clear();
        owedReports.clear();
    }

    /**
     * Writes (or with {@code null}, removes) {@code screen}'s stored tree in this scope; nothing
     * while no scope is known (no user's storage to write to).
     */
    private void storeScreen(List<SessionAction> actions, String screen, String value) {
        if (!scope.equals(StorageScope.NONE)) actions.add(SessionAction.store(scope.screenKey(screen), value));
    }

    private static Json ack(String id) { return Fields.object("type", "ack", "sync", id); }

    private static List<SessionAction> one(SessionAction action) {
        List<SessionAction> actions = new ArrayList<>();
        actions.add(action);
        return actions;
    }
}
