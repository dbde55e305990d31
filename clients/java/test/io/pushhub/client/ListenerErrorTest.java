package io.pushhub.client;

import static io.pushhub.client.Expect.equal;
import static io.pushhub.client.PushHubTest.eventually;
import static io.pushhub.client.PushHubTest.live;
import static io.pushhub.client.PushHubTest.options;
import static io.pushhub.client.PushHubTest.snapshot;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A listener that throws an {@link Error} (an {@code AssertionError}, a {@code StackOverflowError},
 * Kotlin's {@code TODO()}) is reported like an exception: a tree listener's is a
 * {@code render_error}, later listeners still run, a sync is still acked and {@code last_sync}
 * moves on.
 */
final class ListenerErrorTest {
    private ListenerErrorTest() {}

    static void testAnErrorInATreeListenerIsARenderErrorAndLaterListenersRun() {
        ScriptedTransport transport = new ScriptedTransport();
        PushHub hub = new PushHub(options(transport).build());
        List<String> later = new CopyOnWriteArrayList<>();
        hub.subscribe("home", (tree, meta) -> {
            throw new AssertionError("not implemented");
        });
        hub.subscribe("home", (tree, meta) -> later.add("v" + meta.version()));
        ScriptedTransport.Connection connection = live(transport, 1);
        eventually("subscribed", () -> connection.hasSent("{\"screen\":\"home\",\"type\":\"subscribe\"}"));
        Json tree = Json.parse("{\"a\":1}");
        connection.hub(snapshot(tree, 1));
        eventually("render_error", () -> connection.hasSent("{\"hash\":\"" + ScreenHash.of(tree)
                + "\",\"message\":\"not implemented\",\"screen\":\"home\",\"type\":\"render_error\",\"version\":1}"));
        equal("the later listener ran", List.of("v1"), later);
        hub.close();
    }

    static void testAnErrorInASyncListenerStillAcksAndMovesLastSyncOn() {
        ScriptedTransport transport = new ScriptedTransport();
        PushHub hub = new PushHub(options(transport).build());
        List<String> later = new CopyOnWriteArrayList<>();
        hub.onSync(sync -> {
            if (sync.id().equals("s-1")) throw new AssertionError("kotlin TODO()");
        });
        hub.onSync(sync -> later.add(sync.id()));
        ScriptedTransport.Connection connection = live(transport, 1);
        for (int seq = 1; seq <= 3; seq++) {
            connection.hub("{\"type\":\"sync\",\"id\":\"s-" + seq + "\",\"seq\":" + seq
                    + ",\"reason\":\"r\",\"scope\":\"x\",\"jitter_ms\":0}");
        }
        eventually("s-3 acked", () -> connection.hasSent("{\"sync\":\"s-3\",\"type\":\"ack\"}"));
        eventually("last_sync 3", () -> Long.valueOf(3).equals(hub.lastSync()));
        equal("s-1 acked", true, connection.hasSent("{\"sync\":\"s-1\",\"type\":\"ack\"}"));
        equal("the later listener got each", List.of("s-1", "s-2", "s-3"), later);
        hub.close();
    }

    static void testAnErrorInAClientListenerDoesNotStopTheOthers() {
        ScriptedTransport transport = new ScriptedTransport();
        PushHub hub = new PushHub(options(transport).build());
        List<String> later = new CopyOnWriteArrayList<>();
        hub.addListener(new ClientListener() {
            @Override
            public void onWelcome(Welcome welcome) { throw new StackOverflowError("deep"); }

            @Override
            public void onPending(String screen) { throw new AssertionError("pending"); }
        });
        hub.addListener(new ClientListener() {
            @Override
            public void onWelcome(Welcome welcome) { later.add("welcome"); }

            @Override
            public void onPending(String screen) { later.add("pending " + screen); }
        });
        hub.subscribe("home", (tree, meta) -> {});
        ScriptedTransport.Connection connection = live(transport, 1);
        eventually("subscribed", () -> connection.hasSent("{\"screen\":\"home\",\"type\":\"subscribe\"}"));
        connection.hub("{\"type\":\"pending\",\"screen\":\"home\"}");
        eventually("both events", () -> later.size() == 2);
        equal("the later listener got each", List.of("welcome", "pending home"), later);
        hub.close();
    }
}
