package io.pushhub.client;

import static io.pushhub.client.Expect.equal;
import static io.pushhub.client.Expect.isTrue;
import static io.pushhub.client.PushHubTest.eventually;
import static io.pushhub.client.PushHubTest.live;
import static io.pushhub.client.PushHubTest.options;
import static io.pushhub.client.PushHubTest.snapshot;

import java.util.List;

/**
 * What a closing socket refuses to send (its {@code send} returns false) is not lost: acks,
 * {@code track} events and render reports go after the next welcome, as the JavaScript client's
 * {@code unsent} rule has it.
 */
final class UnsentTest {
    private UnsentTest() {}

    static void testAcksTracksAndRenderReportsTheSocketRefusedGoAfterTheNextWelcome() {
        ScriptedTransport transport = new ScriptedTransport();
        PushHub hub = new PushHub(options(transport).build());
        hub.subscribe("home", (tree, meta) -> {});
        hub.onSync(sync -> {});
        ScriptedTransport.Connection first = live(transport, 1);
        eventually("subscribed", () -> first.hasSent("{\"screen\":\"home\",\"type\":\"subscribe\"}"));
        // The socket is closing (the hub sent its close; onClosed has not come yet).
        first.refuses = true;
        first.hub(snapshot(Json.parse("{\"a\":1}"), 1));
        first.hub("{\"type\":\"sync\",\"id\":\"s-1\",\"seq\":1,\"reason\":\"r\",\"scope\":\"x\",\"jitter_ms\":0}");
        hub.track("purchase", 12.5);
        String rendered = "{\"screen\":\"home\",\"type\":\"rendered\",\"version\":1}";
        String ack = "{\"sync\":\"s-1\",\"type\":\"ack\"}";
        String track = "{\"event\":\"purchase\",\"type\":\"track\",\"value\":12.5}";
        eventually("all three refused", () -> first.refused.containsAll(List.of(rendered, ack, track)));
        first.listener.onClosed(1001, "going away");
        ScriptedTransport.Connection second = live(transport, 2);
        eventually("sent after the welcome", () -> second.sent.containsAll(List.of(rendered, ack, track)));
        isTrue("the subscribe first: " + second.sent,
                second.sent.indexOf("{\"have\":{\"hash\":\"" + ScreenHash.of(Json.parse("{\"a\":1}"))
                        + "\",\"version\":1},\"screen\":\"home\",\"type\":\"subscribe\"}") < second.sent.indexOf(track));
        equal("each once", 1L, second.sent.stream().filter(track::equals).count());
        equal("tracks counted once", 1, hub.stats().tracks());
        hub.close();
    }
}
