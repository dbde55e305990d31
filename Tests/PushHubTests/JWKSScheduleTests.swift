import Testing

@testable import PushHub

/// When the JWKS is fetched (DESIGN §18), without a clock or a socket: the schedule's actions and
/// state after each input.
@Suite("JWKS schedule: at start, at max-age, with backoff after failures, at most once per 10 s on unknown kids")
struct JWKSScheduleTests {
    static let second: UInt64 = 1_000_000_000

    /// A schedule whose first fetch started at `t0` and ended with `outcome` at `t0 + 1 s`.
    static func afterFirstFetch(_ outcome: JWKSSchedule.Outcome, t0: UInt64 = 100 * second) -> JWKSSchedule {
        var schedule = JWKSSchedule()
        _ = schedule.timerFired(now: t0)
        _ = schedule.fetchEnded(outcome, now: t0 + second)
        return schedule
    }

    @Test("the first tick fetches; the fetch's end releases the parked hellos and waits for the answer's max-age")
    func startsAndRefreshes() {
        var schedule = JWKSSchedule()
        #expect(schedule.nextDeadline == 0)
        #expect(schedule.timerFired(now: 5 * Self.second) == .fetch)
        #expect(schedule.state == .fetching(startedAt: 5 * Self.second) && schedule.nextDeadline == nil)
        #expect(schedule.timerFired(now: 6 * Self.second) == .none)
        #expect(schedule.fetchEnded(.keys(maxAgeSeconds: 600), now: 6 * Self.second) == .releaseParked)
        #expect(schedule.nextDeadline == 606 * Self.second)
        #expect(schedule.timerFired(now: 605 * Self.second) == .none)
        #expect(schedule.timerFired(now: 606 * Self.second) == .fetch)
    }

    @Test("max-age is clamped to 60 s … 24 h, and is 1 h when the answer has none")
    func refreshIntervals() {
        #expect(JWKSSchedule.refreshInterval(maxAgeSeconds: nil) == 3600 * Self.second)
        #expect(JWKSSchedule.refreshInterval(maxAgeSeconds: 0) == 60 * Self.second)
        #expect(JWKSSchedule.refreshInterval(maxAgeSeconds: 59) == 60 * Self.second)
        #expect(JWKSSchedule.refreshInterval(maxAgeSeconds: 7200) == 7200 * Self.second)
        #expect(JWKSSchedule.refreshInterval(maxAgeSeconds: 86_401) == 86_400 * Self.second)
        #expect(JWKSSchedule.refreshInterval(maxAgeSeconds: .max) == 86_400 * Self.second)
    }

    @Test("Cache-Control: max-age among other directives, quoted, no-cache and no-store, or none")
    func cacheControl() {
        #expect(JWKSSchedule.maxAge(cacheControl: "public, max-age=19103, must-revalidate") == 19103)
        #expect(JWKSSchedule.maxAge(cacheControl: "Max-Age=\"300\"") == 300)
        #expect(JWKSSchedule.maxAge(cacheControl: "no-cache") == 0)
        #expect(JWKSSchedule.maxAge(cacheControl: "max-age=600, no-store") == 0)
        #expect(JWKSSchedule.maxAge(cacheControl: "public") == nil)
        #expect(JWKSSchedule.maxAge(cacheControl: "max-age=-5") == nil)
        #expect(JWKSSchedule.maxAge(cacheControl: nil) == nil)
    }

    @Test("after failures the retries back off 1 s, 2 s, 4 s … up to 5 min; a good answer resets them")
    func backoff() {
        var schedule = JWKSSchedule()
        var now = 10 * Self.second
        var waits: [UInt64] = []
        #expect(schedule.timerFired(now: now) == .fetch)
        for _ in 0..<12 {
            #expect(schedule.fetchEnded(.failed, now: now) == .releaseParked)
            let due = schedule.nextDeadline!
            waits.append((due - now) / Self.second)
            now = due
            #expect(schedule.timerFired(now: now) == .fetch)
        }
        #expect(waits == [1, 2, 4, 8, 16, 32, 64, 128, 256, 300, 300, 300])
        _ = schedule.fetchEnded(.keys(maxAgeSeconds: nil), now: now)
        #expect(schedule.failures == 0 && schedule.nextDeadline == now + 3600 * Self.second)
    }

    @Test("an unknown kid fetches at once 10 s after the last fetch started, not before; a burst makes one fetch")
    func unknownKids() {
        let t0 = 100 * Self.second
        var schedule = Self.afterFirstFetch(.keys(maxAgeSeconds: 3600), t0: t0)
        // 5 s after the last start: released at once, and a fetch asked for at t0 + 10 s.
        #expect(schedule.unknownKidReported(now: t0 + 5 * Self.second) == .releaseParked)
        #expect(schedule.nextDeadline == t0 + 10 * Self.second)
        #expect(schedule.timerFired(now: t0 + 10 * Self.second) == .fetch)
        // While it runs, unknown kids wait for it.
        for _ in 0..<50 { #expect(schedule.unknownKidReported(now: t0 + 10 * Self.second) == .none) }
        #expect(schedule.fetchEnded(.keys(maxAgeSeconds: 3600), now: t0 + 11 * Self.second) == .releaseParked)
        #expect(schedule.unknownKidReported(now: t0 + 19 * Self.second) == .releaseParked)
        #expect(schedule.unknownKidReported(now: t0 + 20 * Self.second) == .fetch)
        #expect(schedule.lastStartedAt == t0 + 20 * Self.second)
    }

    @Test("an unknown kid while the provider is failing fetches at once if 10 s have passed, ahead of the backoff")
    func unknownKidDuringBackoff() {
        let t0 = 100 * Self.second
        var schedule = Self.afterFirstFetch(.failed, t0: t0)
        for _ in 0..<8 {
            let due = schedule.nextDeadline!
            _ = schedule.timerFired(now: due)
            _ = schedule.fetchEnded(.failed, now: due)
        }
        let last = schedule.lastStartedAt!
        #expect(schedule.nextDeadline! > last + 60 * Self.second)
        #expect(schedule.unknownKidReported(now: last + 10 * Self.second) == .fetch)
    }

    @Test("before the first fetch an unknown kid waits for it; a fetch's end when none runs changes nothing")
    func beforeStart() {
        var schedule = JWKSSchedule()
        #expect(schedule.unknownKidReported(now: 0) == .none)
        #expect(schedule.fetchEnded(.failed, now: 0) == .none)
        #expect(schedule.state == .notStarted)
    }
}
