package io.pushhub.client;

import static io.pushhub.client.Expect.equal;
import static io.pushhub.client.Expect.isTrue;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collections;
import java.util.List;
import java.util.Map;

/**
 * The client's protocol rules ({@link ClientSession}), fed message by message: no hub, no
 * sockets, no threads. The checklist is Tests/PushHubClientTests/ClientSessionTests.swift and
 * clients/js/test/client-session.test.js.
 */
final class ClientSessionTest {
    private ClientSessionTest() {}

    static final StorageScope DEVICE = StorageScope.of(null, "d-1");

    static Json json(String text) { return Json.parse(text); }

    /** The messages sent, each in canonical form (member order ignored). */
    static List<String> sent(List<SessionAction> actions) {
        List<String> out = new ArrayList<>();
        for (SessionAction a : actions) if (a instanceof SessionAction.Send) out.add(((SessionAction.Send) a).message.canonical());
        return out;
    }

    static List<String> sentOfType(List<SessionAction> actions, String type) {
        List<String> out = new ArrayList<>();
        for (String m : sent(actions)) if (m.contains("\"type\":\"" + type + "\"")) out.add(m);
        return out;
    }

    static <T> List<T> of(List<SessionAction> actions, Class<T> type) {
        List<T> out = new ArrayList<>();
        for (SessionAction a : actions) if (type.isInstance(a)) out.add(type.cast(a));
        return out;
    }

    static List<ClientEvent> events(List<SessionAction> actions) {
        List<ClientEvent> out = new ArrayList<>();
        for (SessionAction.Emit e : of(actions, SessionAction.Emit.class)) out.add(e.event);
        return out;
    }

    static ClientSession session(StorageScope scope, ScopeRecord record) {
        return new ClientSession(null, null, null, scope, record);
    }

    static ClientSession welcomed(String... screens) {
        ClientSession session = session(DEVICE, ScopeRecord.EMPTY);
        for (String screen : screens) session.subscribe(screen, null);
        session.receive(json("{\"type\":\"welcome\",\"session\":\"s-1\",\"user\":null,\"heartbeat_s\":25,\"sync_seq\":7,\"epoch\":\"e-1\"}"));
        return session;
    }

    static Json snapshot(String screen, Json tree, long version) {
        return Fields.object("type", "snapshot", "screen", screen, "version", version, "hash", ScreenHash.of(tree), "tree", tree);
    }

    static Json patch(String screen, long from, long version, String hash, String ops) {
        return Fields.object("type", "patch", "screen", screen, "from", from, "version", version, "hash", hash, "ops", json(ops));
    }

    static StoredScreen stored(Json tree, long version, String epoch) {
        return new StoredScreen(tree, version, ScreenHash.of(tree), epoch, Collections.emptyMap());
    }

    static String jwt(String sub) {
        String payload = Fields.object("sub", sub).toString();
        return "eyJhbGciOiJIUzI1NiJ9." + Base64.getUrlEncoder().withoutPadding().encodeToString(payload.getBytes(StandardCharsets.UTF_8)) + ".sig";
    }

    static void testAWelcomeSubscribesEachScreenWithHaveWhenATreeIsHeld() {
        ClientSession session = new ClientSession("android", "5.3.0", Map.of("Text", 1, "Carousel", 2), DEVICE,
                new ScopeRecord("e-1", 4L));
        Json tree = json("{\"title\":\"Hi\"}");
        session.subscribe("home", stored(tree, 3, "e-1"));
        session.subscribe("menu", null);
        equal("the hello", List.of("{\"app\":{\"platform\":\"android\",\"version\":\"5.3.0\"},\"components\":{\"Carousel\":2,\"Text\":1},"
                + "\"epoch\":\"e-1\",\"heartbeat\":true,\"last_sync\":4,\"protocol\":1,\"token\":\"t\",\"type\":\"hello\"}"),
                sent(session.opened("t", null)));
        List<SessionAction> actions = session.receive(json("{\"type\":\"welcome\",\"session\":\"s\",\"user\":\"u\",\"heartbeat_s\":25,\"sync_seq\":9,\"epoch\":\"e-1\"}"));
        equal("subscribes", List.of(
                "{\"have\":{\"hash\":\"" + ScreenHash.of(tree) + "\",\"version\":3},\"screen\":\"home\",\"type\":\"subscribe\"}",
                "{\"screen\":\"menu\",\"type\":\"subscribe\"}"), sent(actions));
        equal("goes live", 1, of(actions, SessionAction.GoLive.class).size());
        isTrue("live", session.isLive());
    }

    static void testAPatchFromAVersionNotHeldResubscribesWithoutHaveAndLaterPatchesWaitForTheSnapshot() {
        ClientSession session = welcomed("home");
        session.receive(snapshot("home", json("{\"a\":1}"), 1));
        Json v3 = json("{\"a\":3}");
        List<SessionAction> actions = session.receive(patch("home", 2, 3, ScreenHash.of(v3), "[{\"op\":\"replace\",\"path\":\"/a\",\"value\":3}]"));
        equal("the event", List.of(new Resubscribe("home", Resubscribe.Reason.UNEXPECTED_FROM, 1L, 2L, 3L)), events(actions));
        equal("a subscribe without have", List.of("{\"screen\":\"home\",\"type\":\"subscribe\"}"), sent(actions));
        // A patch already in flight is ignored until the snapshot arrives.
        equal("ignored", List.of(), session.receive(patch("home", 3, 4, "x", "[]")));
        List<SessionAction> accepted = session.receive(snapshot("home", v3, 3));
        equal("delivered", List.of(SessionAction.deliver("home", v3,
                new TreeMeta(3, ScreenHash.of(v3), TreeMeta.Source.SNAPSHOT, Map.of()))), of(accepted, SessionAction.Deliver.class));
    }

    static void testAPatchWhoseResultDoesNotHashToTheHubsHashIsAMismatchAndAResubscribe() {
        ClientSession session = welcomed("home");
        session.receive(snapshot("home", json("{\"a\":1}"), 1));
        Json v2 = json("{\"a\":2}");
        String wrong = ScreenHash.of(json("{\"a\":3}"));
        List<SessionAction> actions = session.receive(patch("home", 1, 2, wrong, "[{\"op\":\"replace\",\"path\":\"/a\",\"value\":2}]"));
        equal("events", List.of(new Mismatch("home", 2, wrong, ScreenHash.of(v2), TreeMeta.Source.PATCH),
                new Resubscribe("home", Resubscribe.Reason.HASH_MISMATCH, 1L, 1L, 2L)), events(actions));
        equal("nothing delivered", 0, of(actions, SessionAction.Deliver.class).size());
        equal("nothing stored", 0, of(actions, SessionAction.Store.class).size());
        equal("resubscribed", List.of("{\"screen\":\"home\",\"type\":\"subscribe\"}"), sent(actions));
        equal("no version held", null, session.screens().get("home").version);
        // The right hash: applied, stored and delivered.
        ClientSession right = welcomed("home");
        right.receive(snapshot("home", json("{\"a\":1}"), 1));
        List<SessionAction> ok = right.receive(patch("home", 1, 2, ScreenHash.of(v2), "[{\"op\":\"replace\",\"path\":\"/a\",\"value\":2}]"));
        equal("delivered", v2, of(ok, SessionAction.Deliver.class).get(0).tree);
        equal("meta", TreeMeta.Source.PATCH, of(ok, SessionAction.Deliver.class).get(0).meta.source());
        equal("from", 1L, of(ok, SessionAction.Deliver.class).get(0).meta.from());
    }

    static void testAPatchThatCannotApplyResubscribes() {
        ClientSession session = welcomed("home");
        session.receive(snapshot("home", json("{\"a\":1}"), 1));
        List<SessionAction> actions = session.receive(patch("home", 1, 2, "x", "[{\"op\":\"remove\",\"path\":\"/nope\"}]"));
        equal("event", List.of(new Resubscribe("home", Resubscribe.Reason.PATCH_FAILED, 1L, 1L, 2L)), events(actions));
        equal("held tree kept for the app", json("{\"a\":1}"), session.screens().get("home").tree);
    }

    static void testASnapshotThatDoesNotHashToItsHashIsKeptWithAMismatchEvent() {
        ClientSession session = welcomed("home");
        Json tree = json("{\"a\":1}");
        List<SessionAction> actions = session.receive(Fields.object("type", "snapshot", "screen", "home", "version", 1, "hash", "h", "tree", tree));
        equal("mismatch", List.of(new Mismatch("home", 1, "h", ScreenHash.of(tree), TreeMeta.Source.SNAPSHOT)), events(actions));
        equal("delivered anyway", 1, of(actions, SessionAction.Deliver.class).size());
        equal("no resubscribe", List.of(), sent(actions));
        equal("the hub's hash kept for have", "h", session.held("home").hash);
    }

    static void testUnchangedConfirmsTheCachedTreeWithoutStoringItAgainAndWithoutATreeResubscribes() {
        Json tree = json("{\"a\":1}");
        ClientSession session = session(DEVICE, new ScopeRecord("e-1", null));
        session.subscribe("home", stored(tree, 1, "e-1"));
        session.receive(json("{\"type\":\"welcome\",\"session\":\"s\",\"heartbeat_s\":25,\"sync_seq\":0,\"epoch\":\"e-1\"}"));
        List<SessionAction> actions = session.receive(Fields.object("type", "unchanged", "screen", "home", "version", 1, "hash", ScreenHash.of(tree)));
        // The cache was shown before the hub confirmed it: now it is confirmed (delivered again), not stored again.
        equal("confirmed", List.of(SessionAction.deliver("home", tree, new TreeMeta(1, ScreenHash.of(tree), TreeMeta.Source.UNCHANGED, Map.of()))), actions);
        equal("a second unchanged: nothing", List.of(),
                session.receive(Fields.object("type", "unchanged", "screen", "home", "version", 1, "hash", ScreenHash.of(tree))));
        equal("counted", 2, session.stats().unchanged);
        ClientSession empty = welcomed("menu");
        List<SessionAction> again = empty.receive(Fields.object("type", "unchanged", "screen", "menu", "version", 1, "hash", "h"));
        equal("resubscribe", List.of(new Resubscribe("menu", Resubscribe.Reason.NO_TREE, null, null, 1L)), events(again));
    }

    static void testSyncsAreDedupedByIdAndLastSyncStaysBelowASyncUntilTheAppHandledIt() {
        ClientSession session = welcomed();
        equal("from the welcome", 7L, session.lastSync());
        Json sync = json("{\"type\":\"sync\",\"id\":\"s-9\",\"seq\":9,\"reason\":\"hotfix\",\"scope\":\"bundle\",\"jitter_ms\":100}");
        List<SessionAction> first = session.receive(sync);
        List<SessionAction.Schedule> scheduled = of(first, SessionAction.Schedule.class);
        equal("scheduled once", 1, scheduled.size());
        equal("the notification", new SyncNotification("s-9", 9, "hotfix", "bundle", null, false, 100, 0), scheduled.get(0).sync);
        equal("below s-9 while it waits", 8L, session.lastSync());
        equal("a duplicate", List.of(), session.receive(sync));
        equal("counted", 1, session.stats().duplicateSyncs);
        List<SessionAction> second = session.receive(json("{\"type\":\"sync\",\"id\":\"s-10\",\"seq\":10,\"reason\":\"r\",\"scope\":\"s\",\"jitter_ms\":0,\"mandatory\":true}"));
        SessionAction.Schedule s10 = of(second, SessionAction.Schedule.class).get(0);
        isTrue("mandatory", s10.sync.mandatory());
        List<SessionAction> handled = session.syncHandled(s10.waiting);
        equal("s-9 still waits", 8L, session.lastSync());
        equal("acked", List.of("{\"sync\":\"s-10\",\"type\":\"ack\"}"), sent(handled));
        List<SessionAction> done = session.syncHandled(scheduled.get(0).waiting);
        equal("both handled", 10L, session.lastSync());
        equal("stored", List.of(SessionAction.store("device:d-1:epoch", "{\"epoch\":\"e-1\",\"last_sync\":10}"),
                SessionAction.store("device:d-1:syncs", "[\"s-10\",\"s-9\"]")), of(done, SessionAction.Store.class));
        equal("handled twice: nothing", List.of(), session.syncHandled(scheduled.get(0).waiting));
    }

    static void testAnAckMadeWhileNotLiveIsSentAfterTheNextWelcome() {
        ClientSession session = welcomed();
        SessionAction.Schedule s = of(session.receive(json("{\"type\":\"sync\",\"id\":\"s-8\",\"seq\":8,\"jitter_ms\":0}")), SessionAction.Schedule.class).get(0);
        session.closed();
        equal("not sent while closed", List.of(), sent(session.syncHandled(s.waiting)));
        List<SessionAction> actions = session.receive(json("{\"type\":\"welcome\",\"session\":\"s-2\",\"heartbeat_s\":25,\"sync_seq\":8,\"epoch\":\"e-1\"}"));
        equal("after the welcome", List.of("{\"sync\":\"s-8\",\"type\":\"ack\"}"), sent(actions));
    }

    static void testAWelcomeFromAnotherHubStateDropsWhatStorageHeld() {
        Json tree = json("{\"title\":\"Hi\"}");
        ClientSession session = session(DEVICE, new ScopeRecord("e-old", 40L));
        List<SessionAction> cached = session.subscribe("home", stored(tree, 3, "e-old"));
        equal("the cache delivered", TreeMeta.Source.CACHE, of(cached, SessionAction.Deliver.class).get(0).meta.source());
        session.receive(json("{\"type\":\"sync\",\"id\":\"s-1\",\"seq\":41,\"jitter_ms\":0}"));
        List<String> hello = sent(session.opened(null, "d-1"));
        isTrue("hello names the old state: " + hello, hello.get(0).contains("\"epoch\":\"e-old\"") && hello.get(0).contains("\"last_sync\":40"));
        List<SessionAction> actions = session.receive(json("{\"type\":\"welcome\",\"session\":\"s\",\"heartbeat_s\":25,\"sync_seq\":2,\"epoch\":\"e-new\"}"));
        equal("no have", List.of("{\"screen\":\"home\",\"type\":\"subscribe\"}"), sent(actions));
        isTrue("the stored tree removed", actions.contains(SessionAction.store("device:d-1:screen:home", null)));
        isTrue("a fresh record", actions.contains(SessionAction.store("device:d-1:epoch", "{\"epoch\":\"e-new\",\"last_sync\":2}")));
        isTrue("nothing held", session.held("home") == null && "e-new".equals(session.epoch()) && session.stats().epochChanges == 1);
        // The new state numbers its syncs from 1 again: s-1 is a new sync here.
        List<SessionAction> replayed = session.receive(json("{\"type\":\"sync\",\"id\":\"s-1\",\"seq\":1,\"jitter_ms\":0}"));
        equal("handed over", 1, of(replayed, SessionAction.Schedule.class).size());
        isTrue("last_sync below it", replayed.contains(SessionAction.store("device:d-1:epoch", "{\"epoch\":\"e-new\",\"last_sync\":0}")));
        equal("acked to this hub", List.of("{\"sync\":\"s-1\",\"type\":\"ack\"}"),
                sent(session.syncHandled(of(replayed, SessionAction.Schedule.class).get(0).waiting)));
    }

    static void testAStoredTreeOfAnotherEpochOrOfNoneIsNeitherDeliveredNorSentAsHave() {
        Json tree = json("{\"title\":\"Hi\"}");
        ClientSession session = session(DEVICE, new ScopeRecord("e-1", null));
        equal("another epoch", List.of(SessionAction.store("device:d-1:screen:home", null)), session.subscribe("home", stored(tree, 3, "e-0")));
        equal("no epoch", List.of(SessionAction.store("device:d-1:screen:menu", null)), session.subscribe("menu", stored(tree, 3, null)));
        ClientSession fresh = session(DEVICE, ScopeRecord.EMPTY);
        fresh.subscribe("home", null);
        List<SessionAction> actions = fresh.receive(json("{\"type\":\"welcome\",\"session\":\"s\",\"heartbeat_s\":25,\"sync_seq\":5,\"epoch\":\"e-9\"}"));
        isTrue("the first epoch recorded", actions.contains(SessionAction.store("device:d-1:epoch", "{\"epoch\":\"e-9\",\"last_sync\":5}")));
        equal("not an epoch change", 0, fresh.stats().epochChanges);
    }

    static void testAnotherUsersScopeForgetsWhatWasHeldAndDeliversTheNewUsersStoredTree() {
        StorageScope alice = StorageScope.of(jwt("alice"), null);
        StorageScope bob = StorageScope.of(jwt("bob"), null);
        equal("keys", "user:alice:screen:home", alice.screenKey("home"));
        equal("record key", "user:bob:epoch", bob.recordKey());
        ClientSession session = session(alice, new ScopeRecord("e-1", 3L));
        session.subscribe("home", stored(json("{\"who\":\"alice\"}"), 2, "e-1"));
        Json bobTree = json("{\"who\":\"bob\"}");
        List<SessionAction> actions = session.enter(bob, new ScopeRecord("e-1", 9L), Map.of("home", stored(bobTree, 2, "e-1")));
        equal("bob's tree", List.of(SessionAction.deliver("home", bobTree, new TreeMeta(2, ScreenHash.of(bobTree), TreeMeta.Source.CACHE, Map.of()))), actions);
        isTrue("held", session.held("home").tree.equals(bobTree) && session.lastSync() == 9L);
        session.enter(alice, new ScopeRecord("e-1", null), Map.of());
        equal("nothing of bob's for alice", null, session.held("home"));
    }

    static void testATokensSubNamesTheScopeAndUserIdsAreEscaped() {
        equal("sub", "u/ü:1", StorageScope.subjectOfToken(jwt("u/ü:1")));
        equal("escaped", "user:a%3Ascreen:epoch", StorageScope.of(jwt("a:screen"), null).recordKey());
        equal("not a JWT", "user:", StorageScope.of("not-a-jwt", "d").name);
        equal("device", "device:d-1", StorageScope.of(null, "d-1").name);
        String numericSub = "a." + Base64.getUrlEncoder().withoutPadding().encodeToString("{\"sub\":1}".getBytes(StandardCharsets.UTF_8)) + ".c";
        equal("a sub that is not a string", null, StorageScope.subjectOfToken(numericSub));
    }

    static void testPendingKeepsTheSubscriptionAndDropsWhatWasHeld() {
        ClientSession session = welcomed("promo");
        equal("pending", List.of(SessionAction.pending("promo")), session.receive(json("{\"type\":\"pending\",\"screen\":\"promo\"}")));
        isTrue("marked", session.screens().get("promo").pending && session.stats().pending == 1);
        Json tree = json("{\"sale\":true}");
        List<SessionAction> delivered = session.receive(snapshot("promo", tree, 1));
        equal("the first publish", 1, of(delivered, SessionAction.Deliver.class).size());
        isTrue("no longer pending", !session.screens().get("promo").pending);
        ClientSession resumed = session(DEVICE, new ScopeRecord("e-1", null));
        resumed.subscribe("home", stored(tree, 1, "e-1"));
        resumed.receive(json("{\"type\":\"welcome\",\"session\":\"s\",\"heartbeat_s\":25,\"sync_seq\":0,\"epoch\":\"e-1\"}"));
        equal("a deleted screen's cache dropped", List.of(SessionAction.store("device:d-1:screen:home", null), SessionAction.pending("home")),
                resumed.receive(json("{\"type\":\"pending\",\"screen\":\"home\"}")));
        equal("nothing held", null, resumed.held("home"));
    }

    static void testGoneEndsTheSubscriptionAndRemovesItsStoredTree() {
        ClientSession session = welcomed("home");
        session.receive(snapshot("home", json("{\"a\":1}"), 1));
        equal("gone", List.of(SessionAction.store("device:d-1:screen:home", null), SessionAction.emit(new Gone("home"))),
                session.receive(json("{\"type\":\"gone\",\"screen\":\"home\"}")));
        isTrue("ended", !session.screens().containsKey("home"));
        equal("unsubscribe of a screen not followed: nothing", List.of(), session.unsubscribe("home"));
    }

    static void testTheLinkIsDeadAfterTwoHeartbeatsAndTwoSecondsOfSilence() {
        ClientSession session = session(DEVICE, ScopeRecord.EMPTY);
        long start = 1_000_000;
        equal("no connection", LinkCheck.closed(), session.checkLink(start));
        session.connecting(start);
        equal("25 s until a welcome", LinkCheck.alive(start + 52_000), session.checkLink(start + 51_000));
        session.opened(null, "d-1");
        session.heard(start + 1_000);
        session.receive(json("{\"type\":\"welcome\",\"session\":\"s\",\"heartbeat_s\":1,\"sync_seq\":0,\"epoch\":\"e\"}"));
        equal("limit", 4_000L, session.liveness().limitMs());
        session.heard(start + 3_000);
        equal("a heartbeat does nothing else", List.of(), session.receive(json("{\"type\":\"heartbeat\"}")));
        equal("alive", LinkCheck.alive(start + 7_000), session.checkLink(start + 5_000));
        equal("dead", LinkCheck.dead(4_100), session.checkLink(start + 7_100));
        equal("counted", 1, session.stats().deadLinks);
        session.closed();
        equal("closed", LinkCheck.closed(), session.checkLink(start + 60_000));
    }

    static void testAHubThatNamesNoEpochLeavesTheLinkUnwatched() {
        ClientSession session = session(DEVICE, ScopeRecord.EMPTY);
        session.connecting(0);
        session.opened(null, "d-1");
        session.receive(json("{\"type\":\"welcome\",\"session\":\"s\",\"heartbeat_s\":1,\"sync_seq\":0}"));
        session.heard(1_000);
        equal("unwatched", LinkCheck.closed(), session.checkLink(600_000));
    }

    static void testRenderReportsMadeWhileNotLiveGoAfterTheNextWelcomeTheLatestPerScreen() {
        ClientSession session = welcomed("home", "menu");
        Json tree = json("{\"title\":\"Hi\"}");
        session.receive(snapshot("home", tree, 3));
        session.closed();
        equal("owed", List.of(), session.rendered("home", 3));
        session.rendered("menu", 1);
        session.renderFailed("home", 3, RenderErrorReport.of(new IllegalStateException("boom")), null);
        List<SessionAction> actions = session.receive(json("{\"type\":\"welcome\",\"session\":\"s-2\",\"heartbeat_s\":25,\"sync_seq\":7,\"epoch\":\"e-1\"}"));
        equal("the latest per screen, oldest screen first", List.of(
                "{\"screen\":\"menu\",\"type\":\"rendered\",\"version\":1}",
                "{\"hash\":\"" + ScreenHash.of(tree) + "\",\"message\":\"boom\",\"screen\":\"home\",\"type\":\"render_error\",\"version\":3}"),
                sent(actions).subList(sent(actions).size() - 2, sent(actions).size()));
        // Another hub state gets none.
        ClientSession other = welcomed("home");
        other.closed();
        other.rendered("home", 3);
        equal("forgotten with the epoch", List.of(),
                sentOfType(other.receive(json("{\"type\":\"welcome\",\"session\":\"s-2\",\"heartbeat_s\":25,\"sync_seq\":0,\"epoch\":\"e-2\"}")), "rendered"));
    }

    static void testRenderFailedWhileLiveSendsTheHeldHashAndTheComponent() {
        ClientSession session = welcomed("home");
        Json tree = json("{\"title\":\"Hi\"}");
        session.receive(snapshot("home", tree, 3));
        RenderErrorReport report = new RenderErrorReport("Carousel", "slide 2 has no image");
        equal("with the held hash", List.of("{\"component\":\"Carousel\",\"hash\":\"" + ScreenHash.of(tree)
                + "\",\"message\":\"slide 2 has no image\",\"screen\":\"home\",\"type\":\"render_error\",\"version\":3}"),
                sent(session.renderFailed("home", 3, report, null)));
        equal("another version: no hash", List.of("{\"component\":\"Carousel\",\"message\":\"slide 2 has no image\",\"screen\":\"home\",\"type\":\"render_error\",\"version\":2}"),
                sent(session.renderFailed("home", 2, report, null)));
    }

    static void testARefusedSubscribeEndsThatSubscriptionAndUnauthorizedStopsReconnecting() {
        ClientSession session = welcomed("nope");
        List<SessionAction> actions = session.receive(json("{\"type\":\"error\",\"code\":\"unknown_screen\",\"message\":\"no screen named nope\",\"ref\":\"subscribe\"}"));
        equal("named", List.of(new HubError("unknown_screen", "no screen named nope", "subscribe", "nope")), events(actions));
        isTrue("ended", !session.screens().containsKey("nope"));
        equal("not fatal", 0, of(actions, SessionAction.StopReconnecting.class).size());
        List<SessionAction> refused = session.receive(json("{\"type\":\"error\",\"code\":\"unauthorized\",\"message\":\"bad token\"}"));
        equal("fatal", 1, of(refused, SessionAction.StopReconnecting.class).size());
    }

    static void testTheStoredFormIsTheOtherClientsAndReadsBackOnlyWhileTheHashHolds() {
        ClientSession session = welcomed("home");
        Json tree = json("{\"b\":[1,2.5,\"x\"],\"a\":{\"\u00e9\":true,\"e\":null}}");
        List<SessionAction> actions = session.receive(snapshot("home", tree, 4));
        String form = of(actions, SessionAction.Store.class).get(0).value;
        equal("canonical, members in order", "{\"epoch\":\"e-1\",\"hash\":\"" + ScreenHash.of(tree)
                + "\",\"tree\":{\"a\":{\"e\":null,\"\u00e9\":true},\"b\":[1,2.5,\"x\"]},\"version\":4}", form);
        equal("reads back", stored(tree, 4, "e-1"), StoredScreen.parse(form));
        equal("a tampered tree does not", null, StoredScreen.parse(form.replace("2.5", "2.6")));
        equal("not JSON", null, StoredScreen.parse("{\"epoch\""));
        equal("record", new ScopeRecord("e-1", 12L), ScopeRecord.parse("{\"epoch\":\"e-1\",\"last_sync\":12}"));
        equal("unreadable record", ScopeRecord.EMPTY, ScopeRecord.parse("{nope"));
    }

    static void testVariantsFromSnapshotsArePatchedOrKeptAndStored() {
        ClientSession session = welcomed("home");
        Json v1 = json("{\"a\":1}");
        Json message = Fields.object("type", "snapshot", "screen", "home", "version", 1, "hash", ScreenHash.of(v1), "tree", v1,
                "variants", json("{\"exp\":\"B\"}"));
        List<SessionAction> first = session.receive(message);
        equal("a snapshot's", Map.of("exp", "B"), of(first, SessionAction.Deliver.class).get(0).meta.variants());
        isTrue("stored with the tree", of(first, SessionAction.Store.class).get(0).value.contains("\"variants\":{\"exp\":\"B\"}"));
        Json v2 = json("{\"a\":2}");
        List<SessionAction> kept = session.receive(patch("home", 1, 2, ScreenHash.of(v2), "[{\"op\":\"replace\",\"path\":\"/a\",\"value\":2}]"));
        equal("a patch without them keeps them", Map.of("exp", "B"), of(kept, SessionAction.Deliver.class).get(0).meta.variants());
        Json only = Fields.object("type", "patch", "screen", "home", "from", 2, "version", 2, "hash", ScreenHash.of(v2), "ops", json("[]"),
                "variants", json("{}"));
        List<SessionAction> cleared = session.receive(only);
        equal("a change of variants alone is delivered", Map.of(), of(cleared, SessionAction.Deliver.class).get(0).meta.variants());
        equal("and stored", 1, of(cleared, SessionAction.Store.class).size());
    }

    static void testNothingIsStoredBeforeAUsersScopeIsKnown() {
        ClientSession session = session(StorageScope.NONE, ScopeRecord.EMPTY);
        session.subscribe("home", null);
        session.receive(json("{\"type\":\"welcome\",\"session\":\"s\",\"heartbeat_s\":25,\"sync_seq\":3,\"epoch\":\"e-1\"}"));
        List<SessionAction> actions = session.receive(snapshot("home", json("{\"a\":1}"), 1));
        equal("delivered", 1, of(actions, SessionAction.Deliver.class).size());
        equal("nothing stored", 0, of(actions, SessionAction.Store.class).size());
        equal("no record either", 0, of(session.receive(json("{\"type\":\"sync\",\"id\":\"s-4\",\"seq\":4}")), SessionAction.Store.class).size());
    }

    static void testASnapshotWithoutATreeIsIgnoredAsTheJavaScriptClientDoes() {
        ClientSession session = welcomed("home");
        Json tree = json("{\"a\":1}");
        session.receive(snapshot("home", tree, 1));
        List<SessionAction> actions = session.receive(Fields.object("type", "snapshot", "screen", "home", "version", 2,
                "hash", ScreenHash.of(Json.NULL)));
        equal("nothing delivered, stored or sent", List.of(), actions);
        equal("the tree held stays", 1L, session.held("home").version);
        equal("counted", 2, session.stats().snapshots());
    }
}
