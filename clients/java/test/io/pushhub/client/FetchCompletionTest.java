package io.pushhub.client;

import static io.pushhub.client.Expect.equal;
import static io.pushhub.client.Expect.isTrue;
import static io.pushhub.client.PushHubTest.eventually;
import static io.pushhub.client.PushHubTest.live;
import static io.pushhub.client.PushHubTest.options;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * {@link PushHub#fetchScreen} completes off the client's state thread: a continuation that
 * blocks (joins another fetch) cannot wedge the client.
 */
final class FetchCompletionTest {
    private FetchCompletionTest() {}

    static void testAContinuationThatJoinsAnotherFetchDoesNotWedgeTheClient()
            throws InterruptedException, ExecutionException {
        ScriptedTransport transport = new ScriptedTransport();
        PushHub hub = new PushHub(options(transport).build());
        ScriptedTransport.Connection connection = live(transport, 1);
        String[] thread = new String[1];
        // The scripted transport does no HTTP: each fetch fails, as a "network" FetchException.
        CompletableFuture<String> chained = hub.fetchScreen("a").handle((ok, e) -> {
            thread[0] = Thread.currentThread().getName();
            return hub.fetchScreen("b").handle((ok2, e2) -> "b " + (e2 == null ? "fetched" : "failed")).join();
        });
        try {
            equal("the chained fetch", "b failed", chained.get(5, TimeUnit.SECONDS));
        } catch (TimeoutException wedged) {
            throw new AssertionError("the chained fetch never completed: the state thread is wedged");
        }
        isTrue("not on the state thread: " + thread[0], !"pushhub-state".equals(thread[0]));
        hub.subscribe("home", (tree, meta) -> {});
        eventually("the client still works", () -> connection.hasSent("{\"screen\":\"home\",\"type\":\"subscribe\"}"));
        hub.close();
    }
}
