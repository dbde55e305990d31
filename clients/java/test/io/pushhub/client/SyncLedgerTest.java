package io.pushhub.client;

import static io.pushhub.client.Expect.equal;
import static io.pushhub.client.Expect.isTrue;

/** Sync dedupe and last_sync (DESIGN §5). */
final class SyncLedgerTest {
    private SyncLedgerTest() {}

    static void testADuplicateIdIsDroppedAndLastSyncWaitsForTheOldestUnhandled() {
        SyncLedger ledger = new SyncLedger(null);
        ledger.welcomed(10L);
        isTrue("settles at the welcome's seq", ledger.settle());
        equal("last_sync", 10L, ledger.lastSync());
        SyncLedger.Waiting a = ledger.received("s-11", 11L);
        SyncLedger.Waiting b = ledger.received("s-12", 12L);
        equal("a duplicate", null, ledger.received("s-11", 11L));
        ledger.settle();
        equal("below s-11", 10L, ledger.lastSync());
        isTrue("handled", ledger.handled(b));
        ledger.settle();
        equal("s-11 still waits", 10L, ledger.lastSync());
        isTrue("handled", ledger.handled(a));
        ledger.settle();
        equal("both", 12L, ledger.lastSync());
        isTrue("not twice", !ledger.handled(a));
    }

    static void testAReplayBelowLastSyncLowersItUntilHandled() {
        SyncLedger ledger = new SyncLedger(20L);
        SyncLedger.Waiting old = ledger.received("s-15", 15L);
        ledger.settle();
        equal("lowered", 14L, ledger.lastSync());
        ledger.handled(old);
        ledger.settle();
        equal("back", 20L, ledger.lastSync());
    }

    static void testAResetForgetsIdsAndWaitingSyncsAreNeverAcked() {
        SyncLedger ledger = new SyncLedger(5L);
        SyncLedger.Waiting waiting = ledger.received("s-6", 6L);
        ledger.reset(null);
        isTrue("not acked after a reset", !ledger.handled(waiting));
        isTrue("the id is new in the new state", ledger.received("s-6", 1L) != null);
    }

    static void testOnlyTheNewestIdsAreRemembered() {
        SyncLedger ledger = new SyncLedger(0L);
        for (int i = 1; i <= SyncLedger.REMEMBERED + 1; i++) ledger.handled(ledger.received("s-" + i, (long) i));
        isTrue("the oldest forgotten", ledger.received("s-1", 1L) != null);
        equal("the newest remembered", null, ledger.received("s-" + (SyncLedger.REMEMBERED + 1), 0L));
    }
}
