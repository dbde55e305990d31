package io.pushhub.client;

import static io.pushhub.client.Expect.equal;
import static io.pushhub.client.Expect.throwsA;

/** Backoff with full jitter and the 1001 going-away rule (docs/clients.md "Reconnect"). */
final class ReconnectScheduleTest {
    private ReconnectScheduleTest() {}

    static void testCeilingsDoubleFromHalfASecondToThirtySeconds() {
        long[] ceilings = new long[9];
        for (int attempt = 0; attempt < ceilings.length; attempt++) ceilings[attempt] = Backoff.DEFAULT.ceilingMs(attempt);
        equal("ceilings", "[500, 1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000]", java.util.Arrays.toString(ceilings));
        equal("never overflows", 30_000L, Backoff.DEFAULT.ceilingMs(1_000));
        equal("full jitter: random × ceiling", 3_000L, Backoff.DEFAULT.delayMs(3, 0.75));
        equal("random 0 waits nothing", 0L, Backoff.DEFAULT.delayMs(8, 0));
        throwsA("a cap below the initial delay", IllegalArgumentException.class, () -> new Backoff(1_000, 500));
    }

    static void testDelaysGrowPerAttemptAndAWelcomeStartsOver() {
        ReconnectSchedule schedule = new ReconnectSchedule(Backoff.DEFAULT, 4_000, 60_000);
        long now = 0;
        equal("attempt 0", 499L, schedule.dropped(1006, now, 0.999));
        equal("attempt 1", 999L, schedule.dropped(1006, now, 0.999));
        equal("attempt 2", 1_000L, schedule.dropped(1006, now, 0.5));
        equal("counted", 3, schedule.attempt());
        schedule.welcomed();
        equal("after a welcome: the first step again", 250L, schedule.dropped(1006, now, 0.5));
    }

    static void testA1001StartsOverAndCapsTheDelaysAtFourSecondsForAMinute() {
        ReconnectSchedule schedule = new ReconnectSchedule(Backoff.DEFAULT, 4_000, 60_000);
        for (int i = 0; i < 8; i++) schedule.dropped(1006, 0, 0.5);
        equal("grown", 30_000L, Backoff.DEFAULT.ceilingMs(schedule.attempt()));
        equal("1001: from the first step", 250L, schedule.dropped(1001, 10_000, 0.5));
        long late = 0;
        for (int i = 0; i < 10; i++) late = schedule.dropped(1006, 20_000, 0.999);
        equal("capped at 4 s within the window", 3_996L, late);
        equal("past the window, the normal ceiling", 29_970L, schedule.dropped(1006, 70_001, 0.999));
    }
}
