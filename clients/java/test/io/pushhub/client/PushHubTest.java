package io.pushhub.client;

import static io.pushhub.client.Expect.equal;
import static io.pushhub.client.Expect.isTrue;

import java.io.IOException;
import java.net.URI;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.BooleanSupplier;

/**
 * The shell ({@link PushHub}) over a scripted transport: which thread listeners run on, what a
 * throwing listener reports, syncs after their jitter and acked, a dead link given up, reconnects,
 * a refusal and close. Deadline waits, no sleeps.
 */
final class PushHubTest {
    private PushHubTest() {}

    static final String WELCOME = "{\"type\":\"welcome\",\"session\":\"s-1\",\"user\":null,\"heartbeat_s\":25,\"sync_seq\":0,\"epoch\":\"e-1\"}";

    static void eventually(String what, BooleanSupplier condition) {
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) throw new AssertionError("never happened: " + what);
            Thread.onSpinWait();
            try {
                Thread.sleep(2);
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
        }
    }

    static PushHubOptions.Builder options(ScriptedTransport transport) {
        return PushHub.options(URI.create("ws://127.0.0.1:1/v1/connect")).device("d-1").transport(transport).random(() -> 0.0);
    }

    static ScriptedTransport.Connection live(ScriptedTransport transport, int connections) {
        eventually("connection " + connections, () -> transport.connections.size() == connections);
        ScriptedTransport.Connection connection = transport.last();
        connection.listener.onOpen();
        eventually("hello", () -> !connection.sent.isEmpty());
        connection.hub(WELCOME);
        return connection;
    }

    static String snapshot(Json tree, long version) {
        return Fields.object("type", "snapshot", "screen", "home", "version", version, "hash", ScreenHash.of(tree), "tree", tree).toString();
    }

    static void testListenersRunOnTheAppsExecutorAndAThrowingOneIsARenderError() {
        ExecutorService main = Executors.newSingleThreadExecutor(r -> new Thread(r, "app-main"));
        ScriptedTransport transport = new ScriptedTransport();
        PushHub hub = new PushHub(options(transport).listenerExecutor(main).build());
        List<String> seen = new CopyOnWriteArrayList<>();
        Subscription home = hub.subscribe("home", (tree, meta) -> {
            seen.add(Thread.currentThread().getName() + " v" + meta.version());
            if (meta.version() == 2) throw new RenderErrorReportTest.Broken("slide 2 has no image");
        });
        ScriptedTransport.Connection connection = live(transport, 1);
        eventually("subscribed", () -> connection.hasSent("{\"screen\":\"home\",\"type\":\"subscribe\"}"));
        Json v1 = Json.parse("{\"a\":1}");
        connection.hub(snapshot(v1, 1));
        eventually("rendered v1", () -> connection.hasSent("{\"screen\":\"home\",\"type\":\"rendered\",\"version\":1}"));
        Json v2 = Json.parse("{\"a\":2}");
        connection.hub(Fields.object("type", "patch", "screen", "home", "from", 1, "version", 2, "hash", ScreenHash.of(v2),
                "ops", Json.parse("[{\"op\":\"replace\",\"path\":\"/a\",\"value\":2}]")).toString());
        String error = "{\"component\":\"Carousel\",\"hash\":\"" + ScreenHash.of(v2)
                + "\",\"message\":\"slide 2 has no image\",\"screen\":\"home\",\"type\":\"render_error\",\"version\":2}";
        eventually("render_error v2", () -> connection.hasSent(error));
        isTrue("no rendered for v2", !connection.hasSent("{\"screen\":\"home\",\"type\":\"rendered\",\"version\":2}"));
        equal("on the app's thread, in order", List.of("app-main v1", "app-main v2"), seen);
        equal("the subscription's tree", v2, home.tree());
        equal("its meta", 2L, home.meta().version());
        hub.close();
        main.shutdown();
    }

    static void testASyncIsHandedOverAfterItsJitterAndAckedOnce() {
        ScriptedTransport transport = new ScriptedTransport();
        PushHub hub = new PushHub(options(transport).random(() -> 0.5).build());
        List<SyncNotification> syncs = new CopyOnWriteArrayList<>();
        hub.onSync(syncs::add);
        ScriptedTransport.Connection connection = live(transport, 1);
        long sent = System.nanoTime();
        String sync = "{\"type\":\"sync\",\"id\":\"s-1\",\"seq\":1,\"reason\":\"hotfix\",\"scope\":\"bundle\",\"jitter_ms\":400}";
        connection.hub(sync);
        connection.hub(sync); // a replay: dropped
        eventually("acked", () -> connection.hasSent("{\"sync\":\"s-1\",\"type\":\"ack\"}"));
        long waitedMs = (System.nanoTime() - sent) / 1_000_000;
        isTrue("waited its jitter: " + waitedMs, waitedMs >= 200);
        equal("once, with its delay", 1, syncs.size());
        equal("delay", 200L, syncs.get(0).delayMs());
        eventually("last_sync", () -> Long.valueOf(1).equals(hub.lastSync()));
        equal("duplicates", 1, hub.stats().duplicateSyncs());
        hub.close();
    }

    static void testADeadLinkIsAbandonedAndTheClientReconnects() {
        ScriptedTransport transport = new ScriptedTransport();
        PushHub hub = new PushHub(options(transport).build());
        List<CloseEvent> closes = new CopyOnWriteArrayList<>();
        hub.addListener(new ClientListener() {
            @Override
            public void onClose(CloseEvent close) { closes.add(close); }
        });
        eventually("connection", () -> transport.connections.size() == 1);
        ScriptedTransport.Connection first = transport.last();
        first.listener.onOpen();
        first.hub(WELCOME.replace("\"heartbeat_s\":25", "\"heartbeat_s\":1")); // dead after 4 s of silence
        eventually("abandoned", () -> first.abandoned);
        eventually("reconnected", () -> transport.connections.size() == 2);
        eventually("the close event", () -> !closes.isEmpty()); // listeners run on their own thread
        equal("a dead link is a 1006 that says why", 1006, closes.get(0).code());
        isTrue(closes.get(0).reason(), closes.get(0).reason().contains("the link is dead"));
        equal("counted", 1, hub.stats().deadLinks());
        hub.close();
    }

    static void testADropReconnectsAndARefusedTokenEndsTheClient() {
        ScriptedTransport transport = new ScriptedTransport();
        PushHub hub = new PushHub(options(transport).build());
        List<ConnectionState> states = new CopyOnWriteArrayList<>();
        hub.addListener(new ClientListener() {
            @Override
            public void onState(ConnectionState state) { states.add(state); }
        });
        ScriptedTransport.Connection first = live(transport, 1);
        eventually("live", () -> hub.state() == ConnectionState.LIVE);
        first.listener.onClosed(1006, "dropped");
        ScriptedTransport.Connection second = live(transport, 2);
        second.hub("{\"type\":\"error\",\"code\":\"unauthorized\",\"message\":\"bad token\"}");
        second.listener.onClosed(1008, "unauthorized");
        eventually("closed", () -> hub.state() == ConnectionState.CLOSED);
        eventually("the states", () -> states.size() == 4);
        equal("states", List.of(ConnectionState.LIVE, ConnectionState.RECONNECTING, ConnectionState.LIVE, ConnectionState.CLOSED), states);
        equal("not retried", 2, transport.connections.size());
    }

    static void testCloseEndsItForGoodAndAStorageFailureIsReported() {
        ScriptedTransport transport = new ScriptedTransport();
        ClientStorage failing = new ClientStorage() {
            @Override
            public String get(String key) throws IOException { throw new IOException("disk gone"); }

            @Override
            public void put(String key, String value) throws IOException { throw new IOException("disk gone"); }

            @Override
            public void remove(String key) throws IOException { throw new IOException("disk gone"); }
        };
        List<HubError> errors = new CopyOnWriteArrayList<>();
        PushHub hub = new PushHub(options(transport).storage(failing).build());
        hub.addListener(new ClientListener() {
            @Override
            public void onError(HubError error) { errors.add(error); }
        });
        hub.subscribe("home", (tree, meta) -> {});
        ScriptedTransport.Connection connection = live(transport, 1);
        connection.hub(snapshot(Json.parse("{\"a\":1}"), 1));
        eventually("a storage error", () -> errors.stream().anyMatch(e -> e.code().equals("storage")));
        hub.close();
        eventually("closed", () -> hub.state() == ConnectionState.CLOSED);
        eventually("the close frame", () -> Integer.valueOf(1000).equals(connection.closedWith));
        connection.listener.onClosed(1000, "");
        equal("no reconnect", 1, transport.connections.size());
    }

    static void testARefusedSubscribeCanBeMadeAgainAndTheEndedSubscriptionGetsNothing() {
        ScriptedTransport transport = new ScriptedTransport();
        PushHub hub = new PushHub(options(transport).build());
        List<String> first = new CopyOnWriteArrayList<>();
        hub.subscribe("promo", (tree, meta) -> first.add("v" + meta.version()));
        ScriptedTransport.Connection connection = live(transport, 1);
        String subscribe = "{\"screen\":\"promo\",\"type\":\"subscribe\"}";
        eventually("subscribed", () -> connection.hasSent(subscribe));
        connection.hub("{\"type\":\"error\",\"code\":\"unknown_screen\",\"message\":\"no screen named promo\",\"ref\":\"subscribe\"}");
        List<String> second = new CopyOnWriteArrayList<>();
        hub.subscribe("promo", (tree, meta) -> second.add("v" + meta.version()));
        eventually("subscribed again", () -> connection.sent.stream().filter(subscribe::equals).count() == 2);
        connection.hub(Fields.object("type", "snapshot", "screen", "promo", "version", 1, "hash", ScreenHash.of(Json.TRUE), "tree", Json.TRUE).toString());
        eventually("the new subscription's tree", () -> second.size() == 1);
        equal("the ended one got nothing", List.of(), first);
        hub.close();
    }

    static void testATokenProviderIsAskedPerConnectionAndAnotherUserGetsOnlyTheirOwnStoredTree() {
        ScriptedTransport transport = new ScriptedTransport();
        MemoryStorage storage = new MemoryStorage();
        Json bobsTree = Json.parse("{\"who\":\"bob\"}");
        storage.put("user:bob:epoch", "{\"epoch\":\"e-1\",\"last_sync\":0}");
        storage.put("user:bob:screen:home", StoredScreen.form("e-1", bobsTree.canonical(), 4, ScreenHash.of(bobsTree), Map.of()));
        java.util.concurrent.atomic.AtomicInteger asked = new java.util.concurrent.atomic.AtomicInteger();
        PushHub hub = new PushHub(PushHub.options(URI.create("ws://127.0.0.1:1/v1/connect")).transport(transport)
                .random(() -> 0.0).storage(storage)
                .tokenProvider(() -> ClientSessionTest.jwt(asked.incrementAndGet() == 1 ? "alice" : "bob")).build());
        List<String> trees = new CopyOnWriteArrayList<>();
        hub.subscribe("home", (tree, meta) -> trees.add(tree + " " + meta.source()));
        ScriptedTransport.Connection first = live(transport, 1);
        equal("the token as a header", "Bearer " + ClientSessionTest.jwt("alice"), first.request.headers().get("Authorization"));
        Json alicesTree = Json.parse("{\"who\":\"alice\"}");
        first.hub(Fields.object("type", "snapshot", "screen", "home", "version", 1, "hash", ScreenHash.of(alicesTree), "tree", alicesTree).toString());
        eventually("alice's tree stored", () -> storage.get("user:alice:screen:home") != null);
        // unauthorized with a token provider: not the end, the provider is asked again.
        first.hub("{\"type\":\"error\",\"code\":\"unauthorized\",\"message\":\"expired\"}");
        first.listener.onClosed(1008, "unauthorized");
        ScriptedTransport.Connection second = live(transport, 2);
        eventually("have from bob's storage", () -> second.hasSent("{\"have\":{\"hash\":\"" + ScreenHash.of(bobsTree)
                + "\",\"version\":4},\"screen\":\"home\",\"type\":\"subscribe\"}"));
        eventually("bob's cached tree", () -> trees.size() == 2);
        equal("alice's, then bob's stored tree", List.of("{\"who\":\"alice\"} SNAPSHOT", "{\"who\":\"bob\"} CACHE"), trees);
        isTrue("never closed for good", hub.state() != ConnectionState.CLOSED);
        hub.close();
    }
}
