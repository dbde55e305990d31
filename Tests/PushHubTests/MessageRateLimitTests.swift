import Testing

@testable import PushHub

@Suite struct MessageRateLimitTests {
    let limit = MessageRateLimit(perSecond: 10, burst: 5)
    let second: UInt64 = 1_000_000_000

    @Test("a burst is admitted, the next message is a warning, the one after it a refusal")
    func burstThenWarnThenRefuse() {
        var bucket = MessageRateLimit.Bucket()
        let now = 5 * second
        for _ in 0..<5 { #expect(bucket.admit(now: now, limit: limit) == .admit) }
        #expect(bucket.admit(now: now, limit: limit) == .warn)
        #expect(bucket.admit(now: now, limit: limit) == .refuse)
    }

    @Test("the bucket refills at the rate; a full bucket forgives the warning")
    func refill() {
        var bucket = MessageRateLimit.Bucket()
        var now = 5 * second
        for _ in 0..<5 { _ = bucket.admit(now: now, limit: limit) }
        #expect(bucket.admit(now: now, limit: limit) == .warn)
        now += second / 10  // one message's worth
        #expect(bucket.admit(now: now, limit: limit) == .admit)
        #expect(bucket.warned)
        #expect(bucket.admit(now: now, limit: limit) == .refuse, "still warned, still over")
        now += second  // rested
        #expect(bucket.admit(now: now, limit: limit) == .admit)
        #expect(!bucket.warned)
    }

    @Test("sustained sending at the rate is never refused; over a window at most burst + rate × t pass")
    func sustained() {
        var bucket = MessageRateLimit.Bucket()
        var now = second
        for _ in 0..<1000 {
            #expect(bucket.admit(now: now, limit: limit) == .admit)
            now += second / 10
        }
        var flooded = MessageRateLimit.Bucket()
        let start = 10 * second
        let admitted = (0..<2000).filter {  // one attempt per millisecond for 2 s
            flooded.admit(now: start + UInt64($0) * 1_000_000, limit: limit) == .admit
        }.count
        #expect(admitted >= 5 + 10 * 2 - 1 && admitted <= 5 + 10 * 2, "\(admitted) admitted")
    }

    @Test("a rate of 0 turns the limit off")
    func off() {
        var bucket = MessageRateLimit.Bucket()
        for _ in 0..<100_000 { #expect(bucket.admit(now: 1, limit: MessageRateLimit(perSecond: 0, burst: 1)) == .admit) }
    }
}
