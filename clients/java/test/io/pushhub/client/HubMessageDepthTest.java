package io.pushhub.client;

import static io.pushhub.client.Expect.equal;
import static io.pushhub.client.Expect.isTrue;
import static io.pushhub.client.PushHubTest.eventually;
import static io.pushhub.client.PushHubTest.live;
import static io.pushhub.client.PushHubTest.options;
import static io.pushhub.client.PushHubTest.snapshot;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The hub accepts trees 256 containers deep (its JSON reader's default), and a snapshot, a patch
 * or a fetch answer wraps the tree one to three levels deeper: hub messages and fetch answers are
 * read with a limit of 512, app input ({@link Json#parse(String)}) with 256.
 */
final class HubMessageDepthTest {
    private HubMessageDepthTest() {}

    /** {@code depth} nested arrays around an empty one's contents: {@code [[…]]}. */
    static Json deepTree(int depth) {
        return Json.parse("[".repeat(depth) + "]".repeat(depth), 1_000);
    }

    static void testASnapshotOfA256DeepTreeArrivesAndAMessageDeeperThan512IsRefused() {
        ScriptedTransport transport = new ScriptedTransport();
        PushHub hub = new PushHub(options(transport).build());
        List<Json> trees = new CopyOnWriteArrayList<>();
        List<HubError> errors = new CopyOnWriteArrayList<>();
        hub.addListener(new ClientListener() {
            @Override
            public void onError(HubError error) { errors.add(error); }
        });
        hub.subscribe("home", (tree, meta) -> trees.add(tree));
        ScriptedTransport.Connection connection = live(transport, 1);
        eventually("subscribed", () -> connection.hasSent("{\"screen\":\"home\",\"type\":\"subscribe\"}"));
        Json deepest = deepTree(256);
        connection.hub(snapshot(deepest, 1));
        eventually("the 256-deep tree arrived", () -> trees.size() == 1);
        equal("as sent", deepest, trees.get(0));
        eventually("rendered", () -> connection.hasSent("{\"screen\":\"home\",\"type\":\"rendered\",\"version\":1}"));
        // 512 deep in all (the snapshot's object around a 511-deep tree) parses; 513 is refused.
        connection.hub(snapshot(deepTree(511), 2));
        eventually("the 511-deep tree arrived", () -> trees.size() == 2);
        connection.hub(snapshot(deepTree(512), 3));
        eventually("refused", () -> errors.size() == 1);
        equal("as bad JSON", "bad_json", errors.get(0).code());
        isTrue("saying the limit: " + errors.get(0).message(), errors.get(0).message().contains("deeper than 512"));
        hub.close();
    }

    static void testAFetchAnswerOfA256DeepTreeIsRead() throws FetchException {
        Json deepest = deepTree(256);
        String body = Fields.object("screen", "home", "version", 4, "hash", ScreenHash.of(deepest), "tree", deepest).toString();
        FetchedScreen fetched = ScreenFetch.answered("home",
                new HttpAnswer(200, Map.of(), body.getBytes(StandardCharsets.UTF_8)), null);
        equal("the tree", deepest, fetched.tree());
    }

    static void testAppInputStaysLimitedTo256() {
        isTrue("256 deep", Json.parse("[".repeat(256) + "]".repeat(256)).kind() == Json.Kind.ARRAY);
        Expect.throwsA("257 deep", JsonException.class, () -> Json.parse("[".repeat(257) + "]".repeat(257)));
        isTrue("512 deep for hub messages", Json.parse("[".repeat(512) + "]".repeat(512), JsonReader.HUB_MAX_DEPTH)
                .kind() == Json.Kind.ARRAY);
        Expect.throwsA("513 deep", JsonException.class,
                () -> Json.parse("[".repeat(513) + "]".repeat(513), JsonReader.HUB_MAX_DEPTH));
    }
}
