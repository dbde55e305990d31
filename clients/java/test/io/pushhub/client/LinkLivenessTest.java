package io.pushhub.client;

import static io.pushhub.client.Expect.equal;
import static io.pushhub.client.Expect.isTrue;

/** The dead-link rule (docs/protocol.md "Heartbeats"), as clients/js/test/link-liveness.test.js checks the JS one. */
final class LinkLivenessTest {
    private LinkLivenessTest() {}

    static void testTheLinkIsDeadAfterTwoHeartbeatsAndTwoSecondsCountedFromTheLastMessage() {
        LinkLiveness liveness = new LinkLiveness();
        equal("not watched", null, liveness.deadlineMs());
        liveness.connecting(0);
        equal("25 s until a welcome", 52_000L, liveness.deadlineMs());
        isTrue("alive just before", !liveness.isDead(51_999));
        liveness.heard(1_000);
        liveness.welcomed(1, true);
        equal("the hub's interval", 4_000L, liveness.limitMs());
        liveness.heard(3_000);
        isTrue("alive", !liveness.isDead(5_000));
        equal("deadline", 7_000L, liveness.deadlineMs());
        isTrue("dead", liveness.isDead(7_100));
        equal("silence", 4_100L, liveness.silenceMs(7_100));
        liveness.closed();
        liveness.heard(8_000); // a late event of a closed socket
        equal("unwatched once closed", null, liveness.deadlineMs());
        liveness.connecting(100_000);
        equal("the last welcome's interval carries over", 104_000L, liveness.deadlineMs());
    }

    static void testAHubWithoutHeartbeatsIsNotWatchedAndABadIntervalKeepsTheCurrentOne() {
        LinkLiveness liveness = new LinkLiveness();
        liveness.connecting(0);
        liveness.welcomed(1, false);
        liveness.heard(1_000);
        isTrue("never dead", liveness.deadlineMs() == null && !liveness.isDead(600_000));
        LinkLiveness other = new LinkLiveness();
        other.connecting(0);
        other.welcomed(0, true);
        other.welcomed(-5, true);
        equal("kept", 52_000L, other.limitMs());
    }
}
