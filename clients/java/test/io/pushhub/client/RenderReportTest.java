package io.pushhub.client;

import static io.pushhub.client.Expect.equal;
import static io.pushhub.client.Expect.isTrue;
import static io.pushhub.client.PushHubTest.eventually;
import static io.pushhub.client.PushHubTest.live;
import static io.pushhub.client.PushHubTest.options;
import static io.pushhub.client.PushHubTest.snapshot;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;

/**
 * A render report ({@code rendered}, {@code render_error}) goes only for the version the client
 * still holds of a screen it still follows (the JavaScript client's rule), and a closed
 * subscription's listener is not called again, also for a tree queued before it closed.
 */
final class RenderReportTest {
    private RenderReportTest() {}

    private static void await(CountDownLatch latch) {
        try {
            latch.await();
        } catch (InterruptedException e) {
            throw new AssertionError(e);
        }
    }

    static void testNoReportForAVersionNoLongerHeldNorAfterTheSubscriptionsClosed() {
        ScriptedTransport transport = new ScriptedTransport();
        PushHub hub = new PushHub(options(transport).build());
        CountDownLatch drawingV1 = new CountDownLatch(1);
        CountDownLatch releaseV1 = new CountDownLatch(1);
        CountDownLatch drawingV3 = new CountDownLatch(1);
        CountDownLatch releaseV3 = new CountDownLatch(1);
        List<String> seenBySecond = new CopyOnWriteArrayList<>();
        Subscription first = hub.subscribe("home", (tree, meta) -> {
            if (meta.version() == 1) {
                drawingV1.countDown();
                await(releaseV1);
            }
            if (meta.version() == 3) {
                drawingV3.countDown();
                await(releaseV3);
            }
        });
        Subscription second = hub.subscribe("home", (tree, meta) -> seenBySecond.add("v" + meta.version()));
        ScriptedTransport.Connection connection = live(transport, 1);
        eventually("subscribed", () -> connection.hasSent("{\"screen\":\"home\",\"type\":\"subscribe\"}"));
        // v1 is being drawn while v2 arrives: v1 is no longer held when its listeners return.
        connection.hub(snapshot(Json.parse("{\"a\":1}"), 1));
        await(drawingV1);
        connection.hub(snapshot(Json.parse("{\"a\":2}"), 2));
        eventually("v2 held", () -> first.meta() != null && first.meta().version() == 2);
        releaseV1.countDown();
        eventually("rendered v2", () -> connection.hasSent("{\"screen\":\"home\",\"type\":\"rendered\",\"version\":2}"));
        isTrue("no rendered for v1, no longer held: " + connection.sent,
                !connection.hasSent("{\"screen\":\"home\",\"type\":\"rendered\",\"version\":1}"));
        // v3 is being drawn by the first subscription when both close: the second's listener,
        // queued behind, is not called, and nothing is reported for a screen no longer followed.
        connection.hub(snapshot(Json.parse("{\"a\":3}"), 3));
        await(drawingV3);
        second.close();
        first.close();
        eventually("unsubscribed", () -> connection.hasSent("{\"screen\":\"home\",\"type\":\"unsubscribe\"}"));
        releaseV3.countDown();
        hub.rendered("flush", 1); // a report made after, on the same threads: everything before it was done
        eventually("the flush", () -> connection.hasSent("{\"screen\":\"flush\",\"type\":\"rendered\",\"version\":1}"));
        equal("the closed subscription's listener got no v3", List.of("v1", "v2"), seenBySecond);
        isTrue("no rendered for v3 after close: " + connection.sent,
                !connection.hasSent("{\"screen\":\"home\",\"type\":\"rendered\",\"version\":3}"));
        hub.close();
    }
}
