package io.pushhub.client;

import java.io.IOException;
import java.net.URI;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The Java client of protocol v1 (DESIGN §12), the JavaScript and Swift clients' behaviour in
 * Java: subscribes to screens and keeps each tree current (RFC 6902 patches, checked against the
 * RFC 8785 + SHA-256 hash after every change, resubscribing on a mismatch), resumes with
 * {@code have} and {@code last_sync} kept in storage per user and hub state (epoch), hands syncs
 * to the app after their jitter wait (deduped by id, then acked), sends {@code rendered} (or
 * {@code render_error} when a tree listener throws, DESIGN §15), gives a connection up when
 * nothing arrived for two heartbeats, and reconnects with exponential backoff and full jitter
 * (starting over, with a short ceiling, when the hub closes with 1001).
 * <pre>
 * PushHub hub = new PushHub(PushHub.options(URI.create("wss://hub.example.com/v1/connect"))
 *         .token(jwt).app("android", "5.3.0").storage(storage).build());
 * Subscription home = hub.subscribe("home", (tree, meta) -> render(tree));
 * hub.onSync(sync -> refetch(sync.scope()));
 * </pre>
 *
 * <p>Threading: every rule is {@link ClientSession}'s, run on ONE serial executor of the client
 * (the "state" thread): transport events, timers and app calls are tasks on it, so the session
 * and every field below the "state-confined" mark are touched by that thread only. Listeners
 * (trees, syncs, events) run on the listener executor, in order; what they report back (a
 * listener's failure, a sync handled) is a task on the state thread again. A listener's failure
 * is anything it throws, {@link Error}s included: it never stops the listeners after it, a sync
 * is acked all the same, and a tree listener's is a {@code render_error}. A render report goes
 * only for the version the client still holds of a screen it still follows, and a closed
 * subscription's listener is not called again. {@link #fetchScreen} futures complete on a
 * thread of their own, never the state thread. Methods may be called from any thread, listeners
 * included. {@link #state()}, {@link #lastSync()},
 * {@link #stats()}, {@link #welcome()} and a subscription's tree are readable from anywhere
 * (published copies).
 */
public final class PushHub implements AutoCloseable {
    /** The subprotocol offered (DESIGN §3). */
    static final String SUBPROTOCOL = "pushhub.v1";
    /** How long the client's threads wait for work before they end (new ones start when needed). */
    private static final long IDLE_THREAD_SECONDS = 30;

    private final PushHubOptions options;
    private final ScheduledThreadPoolExecutor stateThread;
    private final Executor listenerExecutor;
    /** The listener executor when it is the client's own (shut down with it); else {@code null}. */
    private final ExecutorService ownListenerThread;
    /**
     * Where {@link #fetchScreen} futures complete: a thread per completion while others are busy
     * (none while idle), so a continuation that blocks (joins another fetch) wedges nothing.
     */
    private final ThreadPoolExecutor fetchCompletions;
    private final AtomicInteger ids = new AtomicInteger();

    // Published copies, written on the state thread, read anywhere.
    private volatile ConnectionState publishedState = ConnectionState.CONNECTING;
    private volatile Long publishedLastSync;
    private volatile ClientStats publishedStats = new ClientStats();
    private volatile Welcome publishedWelcome;
    private final Map<String, Shown> shown = new ConcurrentHashMap<>();
    private final Set<String> pendingScreens = ConcurrentHashMap.newKeySet();

    // State-confined: touched on the state thread only.
    private final ClientSession session;
    private final Shell shell = new Shell();
    private final ReconnectSchedule schedule;
    private TransportConnection connection;
    /** Bumped by every open and close: events of an older connection are ignored. */
    private int generation;
    private ScheduledFuture<?> livenessCheck;
    private ScheduledFuture<?> reconnect;
    private final Set<ScheduledFuture<?>> syncTimers = new HashSet<>();
    /** {@code handlePush} callbacks, by the waiting sync they are for. */
    private final Map<SyncLedger.Waiting, Runnable> pushCallbacks = new HashMap<>();
    private HubError fatal;
    private String device;
    private String connectionToken;
    private ConnectionState connectionState = ConnectionState.CONNECTING;
    private final Map<String, TreeMap<Integer, Subscription>> treeListeners = new HashMap<>();
    private final TreeMap<Integer, SyncListener> syncListeners = new TreeMap<>();
    private final TreeMap<Integer, ClientListener> clientListeners = new TreeMap<>();

    /** What a subscription's {@code tree()}/{@code meta()} read: the latest tree handed over. */
    private static final class Shown {
        final Json tree;
        final TreeMeta meta;

        Shown(Json tree, TreeMeta meta) {
            this.tree = tree;
            this.meta = meta;
        }
    }

    /** Starts options for a hub at {@code uri} ({@code ws://…/v1/connect} or {@code wss://…}). */
    public static PushHubOptions.Builder options(URI uri) {
        return new PushHubOptions.Builder(uri);
    }

    /** Connects (on the client's thread, at once) and keeps the connection up until {@link #close()}. */
    public PushHub(PushHubOptions options) {
        this.options = options;
        stateThread = new ScheduledThreadPoolExecutor(1, runnable -> daemon(runnable, "pushhub-state"));
        stateThread.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
        stateThread.setRemoveOnCancelPolicy(true);
        // An idle client (closed for good by a refusal, never close()d) holds no thread.
        stateThread.setKeepAliveTime(IDLE_THREAD_SECONDS, TimeUnit.SECONDS);
        stateThread.allowCoreThreadTimeOut(true);
        if (options.listenerExecutor != null) {
            listenerExecutor = options.listenerExecutor;
            ownListenerThread = null;
        } else {
            ThreadPoolExecutor own = new ThreadPoolExecutor(1, 1, IDLE_THREAD_SECONDS, TimeUnit.SECONDS,
                    new LinkedBlockingQueue<>(), runnable -> daemon(runnable, "pushhub-listeners"));
            own.allowCoreThreadTimeOut(true);
            ownListenerThread = own;
            listenerExecutor = ownListenerThread;
        }
        fetchCompletions = new ThreadPoolExecutor(0, Integer.MAX_VALUE, IDLE_THREAD_SECONDS, TimeUnit.SECONDS,
                new SynchronousQueue<>(), runnable -> daemon(runnable, "pushhub-fetch"));
        schedule = new ReconnectSchedule(options.backoff, options.goingAwayCapMs, options.goingAwayWindowMs);
        session = new ClientSession(options.platform, options.appVersion, options.components, StorageScope.NONE,
                ScopeRecord.EMPTY);
        onStateThread(() -> {
            write(StorageScope.LEGACY_LAST_SYNC_KEY, null);
            PushToken pushToken = PushToken.parse(read(StorageScope.PUSH_TOKEN_KEY));
            device = identity(pushToken != null);
            perform(session.setPushToken(pushToken));
            open(); // names the scope (the user) before any subscribe is handled
        });
    }

    private static Thread daemon(Runnable runnable, String name) {
        Thread thread = new Thread(runnable, name);
        thread.setDaemon(true);
        return thread;
    }

    // MARK: - Public API

    public ConnectionState state() { return publishedState; }

    /** The last sync seq fully handled (sent as {@code hello.last_sync} on the next connection); {@code null}: none. */
    public Long lastSync() { return publishedLastSync; }

    /** A copy of the counters. */
    public ClientStats stats() { return publishedStats.copy(); }

    /** The current session's welcome; {@code null} while not live. */
    public Welcome welcome() { return publishedWelcome; }

    /**
     * Follows {@code screen}: {@code listener} gets each new tree (first the stored one,
     * {@code CACHE}, when there is one). When the hub has no version yet, the subscription stays
     * ({@link Subscription#isPending()}, {@link ClientListener#onPending}) and the first publish
     * brings the tree. The last subscription of a screen to close unsubscribes. A listener that
     * throws for a tree the hub sent reports a {@code render_error} for that version.
     */
    public Subscription subscribe(String screen, TreeListener listener) {
        if (screen == null || listener == null) {
            throw new IllegalArgumentException("subscribe needs a screen and a listener");
        }
        Subscription subscription = new Subscription(screen, ids.incrementAndGet(), listener, this);
        onStateThread(() -> {
            treeListeners.computeIfAbsent(screen, s -> new TreeMap<>()).put(subscription.id(), subscription);
            // Not followed yet, or no longer (gone, or a refused subscribe): subscribe (again).
            if (!session.screens().containsKey(screen)) {
                perform(session.subscribe(screen, stored(screen, session.scope())));
            } else {
                Shown current = shown.get(screen);
                // Drawn before: no `rendered` again, but a failure to draw it here is reported.
                if (current != null) {
                    render(screen, current.tree, current.meta, Collections.singletonList(subscription), false);
                }
            }
        });
        return subscription;
    }

    /**
     * Calls {@code listener} with each sync after its random 0..jitter wait; the sync is acked
     * once every sync listener returned.
     */
    public Cancellation onSync(SyncListener listener) {
        int id = ids.incrementAndGet();
        onStateThread(() -> syncListeners.put(id, listener));
        return () -> onStateThread(() -> syncListeners.remove(id));
    }

    /** Listens to the client's events (state, welcome, close, error, resubscribe, mismatch, gone, pending). */
    public Cancellation addListener(ClientListener listener) {
        int id = ids.incrementAndGet();
        onStateThread(() -> clientListeners.put(id, listener));
        return () -> onStateThread(() -> clientListeners.remove(id));
    }

    /**
     * Tells the hub the app drew {@code version} of {@code screen} (confirms experiment exposures,
     * DESIGN §6). Sent automatically after the tree listeners unless {@code autoRendered(false)}.
     * While not connected the latest report per screen waits for the next welcome.
     */
    public void rendered(String screen, long version) {
        onStateThread(() -> perform(session.rendered(screen, version)));
    }

    /**
     * Tells the hub the app could not draw {@code version} of {@code screen} (DESIGN §15: it counts
     * against a release's guard), for errors the app catches itself: a {@code render_error} with
     * the held tree's hash when it is that version, the error's component when it is a
     * {@link RenderErrorDescribing}, and its message (cut to 1000 code points).
     */
    public void renderFailed(String screen, long version, Throwable error) {
        RenderErrorReport report = RenderErrorReport.of(error);
        onStateThread(() -> perform(session.renderFailed(screen, version, report, null)));
    }

    /**
     * Reports a goal event for experiment results (DESIGN §6):
     * {@code {"type":"track","event":…,"value":…}}, e.g. {@code track("purchase", 12.5)}; the hub
     * counts it for every running experiment this client's unit was served a variant of. While not
     * connected it waits (the newest 100; older ones are dropped, counted in
     * {@code stats().droppedTracks()}) and is sent after the next welcome; events waiting when a
     * token provider signs in another user are dropped, never sent as theirs. Once the client is
     * closed for good they are dropped.
     *
     * @param value what the event is worth (an amount, a duration), or {@code null} for the event alone
     * @throws IllegalArgumentException unless {@code event} is 1–64 characters of
     *     {@code A-Z a-z 0-9 _ . : -} and {@code value} finite (nothing is sent)
     */
    public void track(String event) {
        track(event, null);
    }

    /** {@link #track(String)} with what the event is worth. */
    public void track(String event, Double value) {
        Track track = new Track(event, value);
        onStateThread(() -> perform(session.track(track)));
    }

    /**
     * Registers the device's push token for the hub's silent-push fallback (DESIGN §17), or with
     * {@code null} removes it (sign-out): {@code {"type":"push_token","provider":…,"token":…}},
     * sent at once when live and after every welcome, and kept in storage so that a restart sends
     * it again. Call it from {@code FirebaseMessagingService.onNewToken} and at start-up (the same
     * token again changes nothing). The hub keeps tokens per user and device: a client signed in
     * without a {@code device} gets one generated and kept in storage (as anonymous clients do),
     * and reconnects at once if its connection was made without one. A removal made while not
     * live is sent after the next welcome, if the process still runs then.
     */
    public void setPushToken(PushToken token) {
        onStateThread(() -> {
            if (connectionState == ConnectionState.CLOSED) return;
            if (token != null && device == null) {
                device = storedDevice();
                if (connection != null) reopen(); // its hello named no device
            }
            perform(session.setPushToken(token));
        });
    }

    /** {@link #handlePush(Map, Runnable)} without a callback. */
    public boolean handlePush(Map<String, String> data) {
        return handlePush(data, null);
    }

    /**
     * Hands the sync a silent push carries (DESIGN §17) to the sync listeners, as one from the
     * socket but without the jitter wait (the app runs briefly in the background): the FCM data
     * map ({@code RemoteMessage.getData()}) whose {@code pushhub} entry is the sync as JSON text. A
     * sync reaches the app once per id, whichever way came first (the ids of the last 64 handled
     * are kept in storage); a push does not move {@link #lastSync()}, so syncs the socket missed are
     * still replayed. It is acked like any sync (after the next welcome when not live).
     *
     * @param onHandled run once the sync listeners returned, or at once when the sync was handed
     *     over already, the client is closed, or the push is not PushHub's (on a client thread:
     *     finish the background work there)
     * @return whether {@code data} carried a PushHub sync (false: it is the app's own push)
     */
    public boolean handlePush(Map<String, String> data, Runnable onHandled) {
        Json message = pushedSync(data);
        Runnable done = onHandled != null ? onHandled : () -> { };
        if (message == null) {
            done.run();
            return false;
        }
        onStateThread(() -> {
            List<SessionAction> actions = connectionState == ConnectionState.CLOSED ? Collections.emptyList()
                    : session.pushed(message);
            for (SessionAction action : actions) {
                if (action instanceof SessionAction.Schedule) pushCallbacks.put(((SessionAction.Schedule) action).waiting, done);
            }
            if (actions.isEmpty()) {
                done.run();
                publish();
            }
            perform(actions);
        });
        return true;
    }

    /** The sync object of an FCM data map, or null when it carries none (no {@code pushhub} entry, or not a sync with a string id). */
    static Json pushedSync(Map<String, String> data) {
        String text = data == null ? null : data.get("pushhub");
        if (text == null) return null;
        try {
            Json value = Json.parse(text);
            return "sync".equals(Fields.string(value, "type")) && Fields.string(value, "id") != null ? value : null;
        } catch (JsonException e) {
            return null;
        }
    }

    /**
     * {@code GET /v1/screens/{name}} as this client (its token or device, app, components) with
     * {@code If-None-Match} the tag of the tree it holds (or has stored for this user in this hub
     * state): a 304 returns that tree, a 200 checks the new tree's hash and stores it (a later
     * {@code subscribe} starts from it and resumes with {@code have}). Needs no live connection,
     * for code that cannot hold a socket (widgets, background refresh); a subscription keeps
     * following the socket. Completes on a thread of the client's made for it (never the state
     * thread: a continuation may block), or exceptionally with a {@link FetchException}.
     */
    public CompletableFuture<FetchedScreen> fetchScreen(String screen) {
        CompletableFuture<FetchedScreen> result = new CompletableFuture<>();
        boolean accepted = onStateThread(() -> {
            // The tree held, or the one stored in this user's scope for the epoch it is in (the
            // version returned with a 304 must be of this epoch).
            StoredScreen kept = stored(screen, session.scope());
            StoredScreen held = session.held(screen);
            if (held == null && kept != null && java.util.Objects.equals(kept.epoch, session.epoch())) held = kept;
            StoredScreen tagged = held;
            TransportRequest request = ScreenFetch.request(options.uri, screen, currentToken(), device,
                    options.platform, options.appVersion, options.components, tagged);
            options.transport.get(request).whenComplete((answer, failure) -> {
                boolean handled = onStateThread(() -> {
                    if (failure != null) {
                        String why = FailureText.of(failure);
                        completeFetch(result, null, new FetchException("network", 0, why));
                        return;
                    }
                    try {
                        FetchedScreen fetched = ScreenFetch.answered(screen, answer, tagged);
                        if (fetched.status() == 200) keepFetched(fetched);
                        completeFetch(result, fetched, null);
                    } catch (FetchException e) {
                        completeFetch(result, null, e);
                    }
                });
                if (!handled) result.completeExceptionally(FetchException.clientClosed());
            });
        });
        if (!accepted) result.completeExceptionally(FetchException.clientClosed());
        return result;
    }

    /** Completes {@code result} with {@code fetched} or {@code failure} on a fetch completion thread. */
    private void completeFetch(CompletableFuture<FetchedScreen> result, FetchedScreen fetched, FetchException failure) {
        Runnable complete = () -> {
            if (failure != null) {
                result.completeExceptionally(failure);
            } else {
                result.complete(fetched);
            }
        };
        try {
            fetchCompletions.execute(complete);
        } catch (RejectedExecutionException impossible) {
            complete.run(); // an unbounded pool that is never shut down takes every task
        }
    }

    /**
     * Stores a fetched tree for a screen not subscribed (a subscription keeps its own), labelled
     * with the epoch this user's storage is in: a later session in another state drops it.
     */
    private void keepFetched(FetchedScreen fetched) {
        if (session.screens().containsKey(fetched.screen()) || session.scope().equals(StorageScope.NONE)) return;
        write(session.scope().screenKey(fetched.screen()), StoredScreen.form(session.epoch(),
                fetched.tree().canonical(), fetched.version(), fetched.hash(), fetched.variants()));
    }

    /** Closes the connection for good; {@link #state()} becomes {@code CLOSED}. Harmless when closed already. */
    @Override
    public void close() {
        onStateThread(this::closeNow);
    }

    private void closeNow() {
        if (connectionState == ConnectionState.CLOSED) return;
        generation++;
        cancel(reconnect);
        cancel(livenessCheck);
        for (ScheduledFuture<?> timer : syncTimers) timer.cancel(false);
        syncTimers.clear();
        if (connection != null) connection.close(1000, "");
        connection = null;
        session.end();
        for (Runnable done : pushCallbacks.values()) done.run();
        pushCallbacks.clear();
        setState(ConnectionState.CLOSED);
        emit(new CloseEvent(1000, "closed by the app", null, schedule.attempt(), null));
        shutDown();
    }

    /** Ends the client's threads once what they hold was done (listeners already queued still run). */
    private void shutDown() {
        stateThread.shutdown();
        if (ownListenerThread != null) ownListenerThread.shutdown();
    }

    // MARK: - Connection

    private void open() {
        generation++;
        int current = generation;
        String token = currentToken();
        Map<String, String> headers = new LinkedHashMap<>();
        if (token != null) headers.put("Authorization", "Bearer " + token);
        // The user the token names; a token provider that returned none keeps the current one.
        if (token != null || options.tokenProvider == null) enter(StorageScope.of(token, device));
        connectionToken = token;
        session.connecting(now());
        armLivenessCheck();
        connection = options.transport.open(new TransportRequest(options.uri, SUBPROTOCOL, headers),
                new TransportListener() {
                    @Override
                    public void onOpen() {
                        onStateThread(() -> {
                            if (isCurrent(current)) perform(session.opened(connectionToken, device));
                        });
                    }

                    @Override
                    public void onText(String text) {
                        onStateThread(() -> {
                            if (isCurrent(current)) received(text);
                        });
                    }

                    @Override
                    public void onClosed(int code, String reason) {
                        onStateThread(() -> {
                            if (isCurrent(current)) dropped(code, reason);
                        });
                    }
                });
    }

    /** Replaces the connection at once (its hello must name the device now): the old one is closed, its events ignored. */
    private void reopen() {
        TransportConnection old = connection;
        generation++;
        connection = null;
        cancel(livenessCheck);
        session.closed();
        old.close(1000, "");
        setState(ConnectionState.RECONNECTING);
        open();
    }

    private boolean isCurrent(int connectionGeneration) {
        return connectionGeneration == generation && connectionState != ConnectionState.CLOSED;
    }

    /** Uses {@code scope}'s storage from now on, if it is not the one in use. */
    private void enter(StorageScope scope) {
        if (scope.equals(session.scope())) return;
        ScopeRecord record = ScopeRecord.parse(read(scope.recordKey()));
        List<String> handled = new ArrayList<>();
        try {
            String text = read(scope.handledSyncsKey());
            for (Json id : text == null ? Collections.<Json>emptyList() : Json.parse(text).items()) {
                if (id.kind() == Json.Kind.STRING) handled.add(id.asString());
            }
        } catch (JsonException e) {
            // unreadable is as good as absent
        }
        Map<String, StoredScreen> stored = new HashMap<>();
        for (String screen : session.screens().keySet()) {
            StoredScreen s = stored(screen, scope);
            if (s != null) stored.put(screen, s);
        }
        perform(session.enter(scope, record, handled, stored));
    }

    private void received(String text) {
        session.heard(now());
        Json message;
        try {
            message = Json.parse(text, JsonReader.HUB_MAX_DEPTH);
        } catch (JsonException e) {
            emit(new HubError("bad_json", "the hub sent text that is not JSON: " + e.getMessage(), null, null));
            return;
        }
        perform(session.receive(message));
    }

    /** Arms one timer for the current connection's liveness deadline (replacing the armed one). */
    private void armLivenessCheck() {
        cancel(livenessCheck);
        livenessCheck = null;
        Long deadline = session.liveness().deadlineMs();
        if (deadline == null) return;
        int current = generation;
        livenessCheck = stateThread.schedule(() -> checkLiveness(current), Math.max(0, deadline - now()),
                TimeUnit.MILLISECONDS);
    }

    /**
     * The liveness timer fired: give a silent connection up at once (no close handshake: its
     * events are ignored from now on) and reconnect; otherwise check again at the new deadline.
     */
    private void checkLiveness(int current) {
        if (!isCurrent(current)) return;
        LinkCheck check = session.checkLink(now());
        switch (check.kind) {
            case CLOSED:
                return;
            case ALIVE:
                armLivenessCheck();
                return;
            case DEAD:
                TransportConnection abandoned = connection;
                String reason = String.format(java.util.Locale.ROOT,
                        "nothing from the hub for %.1f s (heartbeat every %d s): the link is dead",
                        check.silenceMs / 1000.0, session.liveness().heartbeatSeconds());
                dropped(1006, reason);
                if (abandoned != null) abandoned.abandon();
                return;
        }
    }

    private void dropped(int code, String reason) {
        generation++;
        connection = null;
        cancel(livenessCheck);
        session.closed();
        if (fatal != null) {
            session.end();
            setState(ConnectionState.CLOSED);
            emit(new CloseEvent(code, reason, null, schedule.attempt(), fatal));
            publish();
            return; // the threads stay for fetchScreen; idle, they end by themselves
        }
        long delay = schedule.dropped(code, now(), options.random.getAsDouble());
        setState(ConnectionState.RECONNECTING);
        emit(new CloseEvent(code, reason, delay, schedule.attempt(), null));
        publish();
        reconnect = stateThread.schedule(() -> {
            if (connectionState != ConnectionState.CLOSED) open();
        }, delay, TimeUnit.MILLISECONDS);
    }

    // MARK: - Actions

    /**
     * Performs {@code actions}, publishing what other threads read before (a listener handed a
     * tree sees {@link #stats()} counting it) and after (what the actions changed).
     */
    private void perform(List<SessionAction> actions) {
        publish();
        for (SessionAction action : actions) action.performWith(shell);
        publish();
    }

    /** Performs {@link ClientSession}'s actions (on the state thread). */
    private final class Shell implements SessionAction.Performer {
        @Override
        public void send(Json message) {
            // Not taken (the socket is closing): what must not be lost goes after the next welcome.
            if (connection == null || !connection.send(message.toString())) session.unsent(message);
        }

        @Override
        public void deliver(String screen, Json tree, TreeMeta meta) {
            // Before the listeners run: one that asks `isPending` must see the screen is no longer pending.
            shown.put(screen, new Shown(tree, meta));
            if (meta.source() != TreeMeta.Source.CACHE) pendingScreens.remove(screen);
            TreeMap<Integer, Subscription> listeners = treeListeners.get(screen);
            List<Subscription> handlers = listeners == null ? new ArrayList<>() : new ArrayList<>(listeners.values());
            render(screen, tree, meta, handlers, options.autoRendered && !handlers.isEmpty());
        }

        @Override
        public void schedule(SyncNotification received, SyncLedger.Waiting waiting) {
            long delay = options.waitsForJitter ? (long) (received.jitterMs() * options.random.getAsDouble()) : 0;
            SyncNotification sync = received.delayed(delay);
            ScheduledFuture<?>[] timer = new ScheduledFuture<?>[1];
            timer[0] = stateThread.schedule(() -> {
                syncTimers.remove(timer[0]);
                if (connectionState == ConnectionState.CLOSED) return;
                List<SyncListener> listeners = new ArrayList<>(syncListeners.values());
                onListenerThread(() -> {
                    try {
                        callEach(listeners, listener -> listener.onSync(sync), "a sync listener threw");
                    } finally {
                        onStateThread(() -> {
                            perform(session.syncHandled(waiting));
                            Runnable done = pushCallbacks.remove(waiting);
                            if (done != null) done.run();
                        });
                    }
                });
            }, delay, TimeUnit.MILLISECONDS);
            syncTimers.add(timer[0]);
        }

        @Override
        public void emit(ClientEvent event) {
            PushHub.this.emit(event);
        }

        @Override
        public void pending(String screen) {
            pendingScreens.add(screen);
            shown.remove(screen);
            List<ClientListener> listeners = new ArrayList<>(clientListeners.values());
            onListenerThread(() -> callEach(listeners, listener -> listener.onPending(screen),
                    "a client listener threw"));
        }

        @Override
        public void store(String key, String value) {
            write(key, value);
        }

        @Override
        public void goLive(Welcome welcome) {
            schedule.welcomed();
            fatal = null;
            publishedWelcome = welcome;
            setState(ConnectionState.LIVE);
            armLivenessCheck(); // the welcome named the hub's interval
        }

        @Override
        public void stopReconnecting(HubError error) {
            // A token provider is asked for a fresh token on the next attempt.
            if (!(error.code().equals("unauthorized") && options.tokenProvider != null)) fatal = error;
        }
    }

    /**
     * Calls the listeners of {@code subscriptions} not closed by then with a tree of
     * {@code screen} on the listener executor (called on the state thread). Then, for a tree the
     * hub sent (not {@code CACHE}), and only if the session still holds that version of the
     * screen it held now (not replaced, unsubscribed, resubscribed or dropped meanwhile): the
     * first failure is reported as a {@code render_error}; with none, {@code confirms} sends
     * {@code rendered}.
     */
    private void render(String screen, Json tree, TreeMeta meta, List<Subscription> subscriptions, boolean confirms) {
        ClientSession.Entry entry = session.screens().get(screen);
        onListenerThread(() -> {
            Throwable failure = callEach(subscriptions, subscription -> subscription.draw(tree, meta),
                    "a tree listener threw");
            if (meta.source() == TreeMeta.Source.CACHE || (failure == null && !confirms)) return;
            RenderErrorReport report = failure == null ? null : RenderErrorReport.of(failure);
            onStateThread(() -> {
                if (!session.holds(screen, entry, meta.version())) return;
                if (report != null) {
                    perform(session.renderFailed(screen, meta.version(), report, meta.hash()));
                } else {
                    perform(session.rendered(screen, meta.version()));
                }
            });
        });
    }

    private void emit(ClientEvent event) {
        List<ClientListener> listeners = new ArrayList<>(clientListeners.values());
        onListenerThread(() -> callEach(listeners, event::deliverTo, "a client listener threw"));
    }

    /** A call of one listener, which may throw anything. */
    @FunctionalInterface
    private interface ListenerCall<L> {
        void call(L listener) throws Exception;
    }

    /**
     * Calls {@code call} for each of {@code listeners} in order, each even if one before it threw;
     * whatever one throws ({@link Error}s too: an {@code AssertionError}, Kotlin's
     * {@code TODO()}) is reported on stderr as {@code what} and never rethrown. Returns the first
     * thrown, or {@code null}.
     */
    private static <L> Throwable callEach(List<L> listeners, ListenerCall<L> call, String what) {
        Throwable first = null;
        for (L listener : listeners) {
            try {
                call.call(listener);
            } catch (Throwable thrown) {
                report(what, thrown);
                if (first == null) first = thrown;
            }
        }
        return first;
    }

    private void setState(ConnectionState state) {
        if (connectionState == state) return;
        connectionState = state;
        publish();
        emit(state);
    }

    /** Copies what other threads may read from the session: trees it no longer holds are no longer shown. */
    private void publish() {
        publishedState = connectionState;
        publishedStats = session.stats().copy();
        publishedLastSync = session.lastSync();
        if (!session.isLive()) publishedWelcome = null;
        Map<String, ClientSession.Entry> screens = session.screens();
        shown.keySet().removeIf(screen -> screens.get(screen) == null || screens.get(screen).tree == null);
        pendingScreens.removeIf(screen -> screens.get(screen) == null || !screens.get(screen).pending);
        // A subscription the session ended (gone, a refused subscribe) gets nothing more, also
        // when the screen is subscribed again later.
        treeListeners.keySet().removeIf(screen -> !screens.containsKey(screen));
    }

    void unsubscribe(String screen, int id) {
        onStateThread(() -> {
            TreeMap<Integer, Subscription> listeners = treeListeners.get(screen);
            if (listeners == null || listeners.remove(id) == null || !listeners.isEmpty()) return;
            treeListeners.remove(screen);
            shown.remove(screen);
            perform(session.unsubscribe(screen));
        });
    }

    Json currentTree(String screen) {
        Shown s = shown.get(screen);
        return s == null ? null : s.tree;
    }

    TreeMeta currentMeta(String screen) {
        Shown s = shown.get(screen);
        return s == null ? null : s.meta;
    }

    boolean isPending(String screen) { return pendingScreens.contains(screen); }

    // MARK: - Threads

    /**
     * Runs {@code task} on the state thread; false (and dropped) once the client is closed and its
     * thread ended.
     */
    private boolean onStateThread(Runnable task) {
        try {
            stateThread.execute(() -> {
                try {
                    task.run();
                } catch (RuntimeException e) {
                    report("the client broke an invariant", e);
                }
            });
        } catch (RejectedExecutionException closed) {
            return false; // the client is closed: nothing more happens
        }
        return true;
    }

    private void onListenerThread(Runnable task) {
        try {
            listenerExecutor.execute(task);
        } catch (RejectedExecutionException closed) {
            // The listener executor is shut down: nobody listens any more.
        }
    }

    private static void report(String what, Throwable error) {
        System.err.println("PushHub: " + what + ": " + error);
        error.printStackTrace();
    }

    private static void cancel(ScheduledFuture<?> task) {
        if (task != null) task.cancel(false);
    }

    private static long now() { return System.nanoTime() / 1_000_000; }

    // MARK: - Identity and storage

    private String currentToken() {
        if (options.token != null) return options.token;
        if (options.tokenProvider == null) return null;
        try {
            return options.tokenProvider.get();
        } catch (RuntimeException e) {
            emit(new HubError("token", "the token provider threw: " + e, null, null));
            return null;
        }
    }

    /** The device id: given, or (anonymous, or signed in with a push token) the one kept in storage, generated once. */
    private String identity(boolean hasPushToken) {
        if (options.device != null) return options.device;
        if ((options.token != null || options.tokenProvider != null) && !hasPushToken) return null;
        return storedDevice();
    }

    /** The device id kept in storage, generated (and stored) when there is none. */
    private String storedDevice() {
        String kept = read(StorageScope.DEVICE_KEY);
        if (kept != null && !kept.isEmpty()) return kept;
        byte[] bytes = new byte[8];
        new SecureRandom().nextBytes(bytes);
        StringBuilder id = new StringBuilder("d-");
        for (byte b : bytes) id.append(String.format("%02x", b));
        write(StorageScope.DEVICE_KEY, id.toString());
        return id.toString();
    }

    /** What {@code scope}'s storage holds for {@code screen} if its tree still hashes right (else it is removed). */
    private StoredScreen stored(String screen, StorageScope scope) {
        if (scope.equals(StorageScope.NONE)) return null;
        String text = read(scope.screenKey(screen));
        if (text == null) return null;
        StoredScreen parsed = StoredScreen.parse(text);
        if (parsed == null) write(scope.screenKey(screen), null);
        return parsed;
    }

    private String read(String key) {
        try {
            return options.storage.get(key);
        } catch (IOException | RuntimeException e) {
            emit(new HubError("storage", "reading " + key + ": " + e, null, null));
            return null;
        }
    }

    private void write(String key, String value) {
        try {
            if (value != null) {
                options.storage.put(key, value);
            } else {
                options.storage.remove(key);
            }
        } catch (IOException | RuntimeException e) {
            emit(new HubError("storage", "writing " + key + ": " + e, null, null));
        }
    }
}
