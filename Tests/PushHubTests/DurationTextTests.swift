import TestSupport
import Testing

@testable import PushHub

@Suite struct DurationTextTests {
    @Test(
        "a number with ms, s, m, h or d, or a sum of them from the largest unit down, is a duration",
        arguments: [
            ("500ms", Duration.milliseconds(500)), ("25s", .seconds(25)), ("2m", .seconds(120)),
            ("1h", .seconds(3600)), ("1d", .seconds(86_400)), ("30d", .seconds(30 * 86_400)), ("0s", .zero),
            ("1h30m", .seconds(5400)), ("1d12h", .seconds(129_600)), ("2m30s", .seconds(150)),
            ("1s500ms", .milliseconds(1500)), ("1d1h1m1s1ms", .milliseconds(90_061_001)),
        ])
    func parses(_ text: String, _ expected: Duration) {
        #expect(DurationText.parse(text) == expected)
    }

    @Test(
        "anything else is not a duration: no unit, a sign, spaces, an unknown, repeated or out-of-order unit, an overflow",
        arguments: [
            "", "5", "-1s", "+1s", "1 h", "1H", "1w", "1y", "h", "1h30", "30m1h", "1h1h", "1ms1s", "1.5h", "1d 2h",
            "106751991168d", "9223372036854775807s", "99999999999999999999ms", "1d9223372036854775807ms",
        ])
    func refuses(_ text: String) {
        #expect(DurationText.parse(text) == nil)
    }

    @Test("the pushhub flags read the same durations (`--drain-timeout 1m30s`, `--idle-timeout 1d`)")
    func hubFlags() throws {
        let config = try HubOptions.parse(["--drain-timeout", "1m30s", "--idle-timeout", "1d"], environment: [:]).config
        #expect(config.drainTimeout == .seconds(90) && config.idleTimeout == .seconds(86_400))
    }

    @Test(
        "a limit is described in words and in the form people type, never as fractional seconds",
        arguments: [
            (Duration.seconds(30 * 86_400), "30 days (30d)"), (.seconds(3600), "1 hour (1h)"),
            (.seconds(5400), "1 hour 30 minutes (1h30m)"), (.milliseconds(1500), "1 second 500 milliseconds (1s500ms)"),
            (.zero, "0 seconds (0s)"), (.seconds(-5), "0 seconds (0s)"), (.nanoseconds(999), "0 seconds (0s)"),
        ])
    func describes(_ duration: Duration, _ expected: String) {
        #expect(DurationText.describe(duration) == expected)
    }

    @Test("the short form of a description parses back to the duration (seeded random milliseconds)")
    func roundTrip() throws {
        var generator = SeededGenerator(state: 24)
        for _ in 0..<10_000 {
            // Up to about 100 years, and small amounts where every unit boundary is.
            let milliseconds = Int64(generator.next() % (generator.next() % 2 == 0 ? 100_000 : 3_153_600_000_000))
            let text = DurationText.describe(.milliseconds(milliseconds))
            let short = try #require(text.split(separator: "(").last?.dropLast())
            #expect(DurationText.parse(String(short)) == .milliseconds(milliseconds), "\(text)")
        }
    }
}
