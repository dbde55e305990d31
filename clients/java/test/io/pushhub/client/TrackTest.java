package io.pushhub.client;

import static io.pushhub.client.ClientSessionTest.json;
import static io.pushhub.client.ClientSessionTest.sent;
import static io.pushhub.client.ClientSessionTest.welcomed;
import static io.pushhub.client.Expect.equal;
import static io.pushhub.client.Expect.isTrue;
import static io.pushhub.client.Expect.throwsA;

import java.util.List;
import java.util.Map;

/** Goal events (DESIGN §6): checked at the call, sent live, queued offline, never sent as another user. */
final class TrackTest {
    private TrackTest() {}

    static final String WELCOME = "{\"type\":\"welcome\",\"session\":\"s-2\",\"heartbeat_s\":25,\"sync_seq\":7,\"epoch\":\"e-1\"}";

    static void testABadEventOrValueIsRefusedAtTheCallSayingWhatToFix() {
        equal("fine", "{\"event\":\"checkout.done\",\"type\":\"track\",\"value\":12.5}",
                new Track("checkout.done", 12.5).message().canonical());
        isTrue("a space", throwsA("space", IllegalArgumentException.class, () -> new Track("a b", null)).getMessage()
                .contains("has \" \" at offset 1"));
        isTrue("empty", throwsA("empty", IllegalArgumentException.class, () -> new Track("", null)).getMessage().contains("empty"));
        throwsA("65 characters", IllegalArgumentException.class, () -> new Track("x".repeat(65), null));
        throwsA("NaN", IllegalArgumentException.class, () -> new Track("x", Double.NaN));
        throwsA("infinite", IllegalArgumentException.class, () -> new Track("x", Double.POSITIVE_INFINITY));
    }

    static void testSentAtOnceWhenLiveElseTheNewest100GoAfterTheWelcomesSubscribes() {
        ClientSession session = welcomed("home");
        equal("live", List.of("{\"event\":\"buy\",\"type\":\"track\"}"), sent(session.track(new Track("buy", null))));
        session.closed();
        for (int i = 0; i < 105; i++) equal("queued", List.of(), session.track(new Track("e" + i, null)));
        List<String> after = sent(session.receive(json(WELCOME)));
        equal("subscribe first", "{\"screen\":\"home\",\"type\":\"subscribe\"}", after.get(0));
        equal("the newest 100", 100, after.size() - 1);
        equal("oldest kept", "{\"event\":\"e5\",\"type\":\"track\"}", after.get(1));
        equal("dropped", 5, session.stats().droppedTracks);
        equal("sent", 101, session.stats().tracks);
    }

    static void testOnceEndedTracksAreDroppedAndTracksOfAnotherUserAreNeverSent() {
        ClientSession session = welcomed();
        session.closed();
        session.track(new Track("waiting", null));
        session.end();
        equal("dropped at the end", 1, session.stats().droppedTracks);
        equal("and later ones", List.of(), session.track(new Track("late", null)));
        equal("counted", 2, session.stats().droppedTracks);
        ClientSession alice = ClientSessionTest.session(StorageScope.of(ClientSessionTest.jwt("alice"), null), ScopeRecord.EMPTY);
        alice.track(new Track("alices", null));
        alice.enter(StorageScope.of(ClientSessionTest.jwt("bob"), null), ScopeRecord.EMPTY, Map.of());
        equal("not sent as bob's", List.of(), ClientSessionTest.sentOfType(alice.receive(json(WELCOME)), "track"));
        // Tracks made before any user was known are the first user's.
        ClientSession fresh = ClientSessionTest.session(StorageScope.NONE, ScopeRecord.EMPTY);
        fresh.track(new Track("early", null));
        fresh.enter(StorageScope.of(null, "d-1"), ScopeRecord.EMPTY, Map.of());
        equal("sent", List.of("{\"event\":\"early\",\"type\":\"track\"}"), ClientSessionTest.sentOfType(fresh.receive(json(WELCOME)), "track"));
    }
}
