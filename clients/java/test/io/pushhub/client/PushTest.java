package io.pushhub.client;

import static io.pushhub.client.Expect.equal;
import static io.pushhub.client.Expect.isTrue;

import java.net.URI;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Push tokens and syncs from silent pushes (DESIGN §17): the token's forms, the session's rules
 * (the token after every welcome; one hand-over per sync id whichever way it came; a push never
 * moves last_sync) and {@link PushHub} performing them. The cases of
 * Tests/PushHubClientTests/ClientPushTests.swift and clients/js/test/push.test.js.
 */
final class PushTest {
    private PushTest() {}

    static final StorageScope DEVICE = StorageScope.of(null, "d-1");
    static final Json WELCOME = Json.parse(
            "{\"type\":\"welcome\",\"session\":\"s-1\",\"user\":null,\"heartbeat_s\":25,\"sync_seq\":7,\"epoch\":\"e-1\"}");
    static final PushToken FCM = PushToken.fcm("f-1");
    static final String FCM_MESSAGE = "{\"provider\":\"fcm\",\"token\":\"f-1\",\"type\":\"push_token\"}";
    static final String REMOVAL = "{\"token\":null,\"type\":\"push_token\"}";

    static Json sync(String id, long seq) {
        return Fields.object("type", "sync", "id", id, "seq", seq, "reason", "r", "scope", "bundle", "jitter_ms", 0);
    }

    static ClientSession live(PushToken token, List<String> handled) {
        ClientSession session = new ClientSession(null, null, null, StorageScope.NONE, ScopeRecord.EMPTY);
        session.enter(DEVICE, new ScopeRecord("e-1", 7L), handled, Collections.emptyMap());
        session.setPushToken(token);
        session.receive(WELCOME);
        return session;
    }

    static List<SyncLedger.Waiting> scheduled(List<SessionAction> actions) {
        List<SyncLedger.Waiting> out = new ArrayList<>();
        for (SessionAction a : actions) if (a instanceof SessionAction.Schedule) out.add(((SessionAction.Schedule) a).waiting);
        return out;
    }

    /** The value last stored at {@code key} among {@code actions}; "absent" when none was. */
    static String stored(List<SessionAction> actions, String key) {
        String value = "absent";
        for (SessionAction a : actions) {
            if (a instanceof SessionAction.Store && ((SessionAction.Store) a).key.equals(key)) value = ((SessionAction.Store) a).value;
        }
        return value;
    }

    static void testTokenForms() {
        PushToken apns = PushToken.apns(new byte[] {0x0A, (byte) 0xBC, (byte) 0xFF, 0x00}, "com.example.app");
        equal("APNs: lower-case hex with its topic",
                "{\"provider\":\"apns\",\"token\":\"0abcff00\",\"topic\":\"com.example.app\",\"type\":\"push_token\"}",
                apns.message().canonical());
        equal("FCM: as given, no topic", FCM_MESSAGE, FCM.message().canonical());
        equal("stored and read back", apns, PushToken.parse(apns.message().toString()));
        equal("unreadable", null, PushToken.parse("garbage"));
        equal("another provider", null, PushToken.parse("{\"provider\":\"webpush\",\"token\":\"x\"}"));
        Expect.throwsA("an empty FCM token", IllegalArgumentException.class, () -> PushToken.fcm(""));
    }

    static void testTheSyncIsFoundOnlyInAPushhubEntryHoldingASync() {
        Map<String, String> data = new HashMap<>();
        data.put("pushhub", "{\"type\":\"sync\",\"id\":\"s-3\",\"seq\":3,\"scope\":\"config\"}");
        equal("found", "config", Fields.string(PushHub.pushedSync(data), "scope"));
        for (String other : Arrays.asList("{not json", "{\"type\":\"sync\",\"seq\":3}", "{\"type\":\"other\",\"id\":\"s\"}", "42")) {
            data.put("pushhub", other);
            equal(other, null, PushHub.pushedSync(data));
        }
        equal("none", null, PushHub.pushedSync(Collections.singletonMap("title", "hi")));
    }

    static void testTheTokenGoesAfterEveryWelcomeAtOnceWhenSetAndNotAgainWhenUnchanged() {
        ClientSession session = live(FCM, Collections.emptyList());
        List<String> sent = ClientSessionTest.sent(session.receive(WELCOME));
        equal("after the welcome", FCM_MESSAGE, sent.get(sent.size() - 1));
        isTrue("the same again: nothing", session.setPushToken(PushToken.fcm("f-1")).isEmpty());
        List<SessionAction> changed = session.setPushToken(PushToken.fcm("f-2"));
        equal("sent at once", Arrays.asList(FCM_MESSAGE.replace("f-1", "f-2")), ClientSessionTest.sent(changed));
        equal("stored", PushToken.fcm("f-2").message().toString(), stored(changed, StorageScope.PUSH_TOKEN_KEY));
    }

    static void testRemovingTheTokenSendsANullTokenNowOrOnceAfterTheNextWelcome() {
        ClientSession online = live(FCM, Collections.emptyList());
        List<SessionAction> removed = online.setPushToken(null);
        equal("sent", Arrays.asList(REMOVAL), ClientSessionTest.sent(removed));
        equal("removed from storage", null, stored(removed, StorageScope.PUSH_TOKEN_KEY));
        ClientSession offline = live(FCM, Collections.emptyList());
        offline.closed();
        isTrue("not live: nothing sent", ClientSessionTest.sent(offline.setPushToken(null)).isEmpty());
        List<String> next = ClientSessionTest.sent(offline.receive(WELCOME));
        equal("after the welcome", REMOVAL, next.get(next.size() - 1));
        offline.closed();
        isTrue("once", !ClientSessionTest.sent(offline.receive(WELCOME)).contains(REMOVAL));
        isTrue("no token, nothing to remove",
                ClientSessionTest.sent(live(null, Collections.emptyList()).setPushToken(null)).isEmpty());
    }

    static void testAPushedSyncIsHandedOverAndAckedButLastSyncMovesOnlyWithTheSocketsCopy() {
        ClientSession session = live(null, Collections.emptyList());
        List<SyncLedger.Waiting> pushed = scheduled(session.pushed(sync("s-9", 9)));
        equal("scheduled", 1, pushed.size());
        List<SessionAction> handled = session.syncHandled(pushed.get(0));
        equal("acked", Arrays.asList("{\"sync\":\"s-9\",\"type\":\"ack\"}"), ClientSessionTest.sent(handled));
        equal("its id stored", "[\"s-9\"]", stored(handled, DEVICE.handledSyncsKey()));
        equal("last_sync kept: s-8 may still come over the socket", 7L, session.lastSync());
        List<SessionAction> replay = session.receive(sync("s-9", 9));
        isTrue("not handed again", scheduled(replay).isEmpty());
        equal("the replay moves last_sync", 9L, session.lastSync());
        equal("stored", "{\"epoch\":\"e-1\",\"last_sync\":9}", stored(replay, DEVICE.recordKey()));
    }

    static void testASyncTheSocketBroughtFirstIsNotHandedOverByItsPush() {
        ClientSession session = live(null, Collections.emptyList());
        equal("from the socket", 1, scheduled(session.receive(sync("s-8", 8))).size());
        isTrue("not from the push", session.pushed(sync("s-8", 8)).isEmpty());
        equal("duplicates", 1, session.stats().duplicateSyncs);
    }

    static void testTheSocketsCopyOfAWaitingPushHoldsLastSyncBackUntilTheAppReturns() {
        ClientSession session = live(null, Collections.emptyList());
        SyncLedger.Waiting waiting = scheduled(session.pushed(sync("s-9", 9))).get(0);
        session.receive(sync("s-9", 9));
        equal("held back", 8L, session.lastSync());
        session.syncHandled(waiting);
        equal("then moved", 9L, session.lastSync());
    }

    static void testTheLast64HandledIdsAreStoredAndANewSessionHandsNoneOverAgain() {
        ClientSession session = live(null, Collections.emptyList());
        String stored = null;
        for (long seq = 10; seq < 80; seq++) {
            SyncLedger.Waiting waiting = scheduled(session.receive(sync("s-" + seq, seq))).get(0);
            stored = stored(session.syncHandled(waiting), DEVICE.handledSyncsKey());
        }
        List<String> ids = new ArrayList<>();
        List<Json> items = new ArrayList<>();
        for (long seq = 16; seq < 80; seq++) {
            ids.add("s-" + seq);
            items.add(Json.of("s-" + seq));
        }
        equal("the last 64", Json.array(items).toString(), stored);
        ClientSession restarted = live(null, ids);
        isTrue("a push of a handled one", restarted.pushed(sync("s-79", 79)).isEmpty());
        isTrue("a replay of a handled one", scheduled(restarted.receive(sync("s-16", 16))).isEmpty());
        equal("an older one is new", 1, scheduled(restarted.pushed(sync("s-15", 15))).size());
    }

    static void testAnotherHubStateForgetsTheHandledIds() {
        ClientSession session = live(null, Arrays.asList("s-1"));
        List<SessionAction> actions = session.receive(Json.parse(
                "{\"type\":\"welcome\",\"session\":\"s-2\",\"heartbeat_s\":25,\"sync_seq\":0,\"epoch\":\"e-2\"}"));
        equal("removed", null, stored(actions, DEVICE.handledSyncsKey()));
        equal("s-1 is new there", 1, scheduled(session.pushed(sync("s-1", 1))).size());
    }

    static void testASignedInClientGetsADeviceForItsTokenReconnectsWithItAndSendsTheToken() {
        ScriptedTransport transport = new ScriptedTransport();
        MemoryStorage storage = new MemoryStorage();
        PushHub hub = new PushHub(PushHub.options(URI.create("ws://127.0.0.1:1/v1/connect")).token("t").storage(storage)
                .transport(transport).random(() -> 0.0).build());
        ScriptedTransport.Connection first = PushHubTest.live(transport, 1);
        isTrue("no device at first", !first.sent.get(0).contains("\"device\""));
        hub.setPushToken(FCM);
        ScriptedTransport.Connection second = PushHubTest.live(transport, 2);
        equal("the first closed", 1000, first.closedWith);
        String device = storage.get("device");
        isTrue("a device generated: " + device, device != null && device.startsWith("d-"));
        isTrue("the hello names it", second.sent.get(0).contains("\"device\":\"" + device + "\""));
        PushHubTest.eventually("the token", () -> second.hasSent(FCM_MESSAGE));
        hub.close();

        ScriptedTransport again = new ScriptedTransport();
        PushHub restarted = new PushHub(PushHub.options(URI.create("ws://127.0.0.1:1/v1/connect")).token("t")
                .storage(storage).transport(again).random(() -> 0.0).build());
        ScriptedTransport.Connection connection = PushHubTest.live(again, 1);
        isTrue("the stored device", connection.sent.get(0).contains("\"device\":\"" + device + "\""));
        PushHubTest.eventually("the stored token", () -> connection.hasSent(FCM_MESSAGE));
        equal("one connection", 1, again.connections.size());
        restarted.close();
    }

    static void testHandlePushAnswersWhetherItWasPushHubsAndCallsBackOnceHandled() {
        ScriptedTransport transport = new ScriptedTransport();
        PushHub hub = new PushHub(PushHubTest.options(transport).build());
        List<String> handed = new CopyOnWriteArrayList<>();
        hub.onSync(s -> handed.add(s.id()));
        AtomicInteger callbacks = new AtomicInteger();
        List<Integer> seenByCallback = new CopyOnWriteArrayList<>();
        Runnable done = () -> {
            seenByCallback.add(handed.size());
            callbacks.incrementAndGet();
        };
        isTrue("not ours", !hub.handlePush(Collections.singletonMap("title", "hi"), done));
        Map<String, String> data = Collections.singletonMap("pushhub", "{\"type\":\"sync\",\"id\":\"s-5\",\"seq\":5}");
        isTrue("ours", hub.handlePush(data, done));
        isTrue("ours again", hub.handlePush(data, done));
        PushHubTest.eventually("three callbacks", () -> callbacks.get() == 3);
        equal("handed once", Arrays.asList("s-5"), handed);
        isTrue("after the handlers: " + seenByCallback, seenByCallback.contains(1));
        equal("pushed", 1, hub.stats().pushedSyncs());
        ScriptedTransport.Connection connection = PushHubTest.live(transport, 1);
        PushHubTest.eventually("acked after the welcome", () -> connection.hasSent("{\"sync\":\"s-5\",\"type\":\"ack\"}"));
        hub.close();
    }
}
