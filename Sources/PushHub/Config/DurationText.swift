/// Durations as people write them, read and written the same way by the hub's flags, the admin
/// API's `ttl` and `spread`, and hubctl: a whole number with a unit — `ms`, `s`, `m`, `h` or `d`
/// (24 hours) — or a sum of such parts from the largest unit down, each unit once (`1h30m`,
/// `1d12h`, `2m30s`).
///
/// Invariants: the short form `describe` gives in parentheses parses back to the same duration
/// (for a whole, non-negative number of milliseconds); `parse` never traps (an amount whose
/// milliseconds do not fit is nil).
public enum DurationText {
    /// The units, largest first, with their milliseconds and their names in words.
    static let units: [(suffix: String, milliseconds: Int64, singular: String, plural: String)] = [
        ("d", 86_400_000, "day", "days"), ("h", 3_600_000, "hour", "hours"), ("m", 60_000, "minute", "minutes"),
        ("s", 1000, "second", "seconds"), ("ms", 1, "millisecond", "milliseconds"),
    ]

    /// `500ms`, `25s`, `2m`, `1h`, `30d`, `1h30m`; nil for anything else (a bare number, a
    /// negative amount, a unit out of order or repeated, an overflow).
    public static func parse(_ text: String) -> Duration? {
        var rest = Substring(text)
        var total: Int64 = 0
        var previous: Int?  // the index of the last unit read: the next one must be smaller
        guard !rest.isEmpty else { return nil }
        while !rest.isEmpty {
            let digits = rest.prefix { $0.isASCII && $0.isNumber }
            let suffix = rest.dropFirst(digits.count).prefix { $0.isASCII && $0.isLetter }
            guard !digits.isEmpty, let amount = Int64(digits),
                let index = units.firstIndex(where: { $0.suffix == suffix }),
                previous.map({ index > $0 }) ?? true
            else { return nil }
            let (part, overflow) = amount.multipliedReportingOverflow(by: units[index].milliseconds)
            let (sum, sumOverflow) = total.addingReportingOverflow(part)
            guard !overflow, !sumOverflow else { return nil }
            total = sum
            previous = index
            rest = rest.dropFirst(digits.count + suffix.count)
        }
        return .milliseconds(total)
    }

    /// `duration` in words and in the form `parse` reads: "30 days (30d)", "1 hour 30 minutes
    /// (1h30m)", "0 seconds (0s)". Below a millisecond is dropped; a negative duration is read
    /// as zero.
    public static func describe(_ duration: Duration) -> String {
        let (words, short) = parts(duration)
        return "\(words) (\(short))"
    }

    private static func parts(_ duration: Duration) -> (words: String, short: String) {
        let (seconds, attoseconds) = duration.components
        guard seconds >= 0 else { return ("0 seconds", "0s") }
        let (milliseconds, overflow) = seconds.multipliedReportingOverflow(by: 1000)
        let (sum, sumOverflow) = milliseconds.addingReportingOverflow(attoseconds / 1_000_000_000_000_000)
        var rest = overflow || sumOverflow ? Int64.max : sum  // beyond 292 million years: saturated
        var words: [String] = []
        var short = ""
        for unit in units where rest >= unit.milliseconds {
            let amount = rest / unit.milliseconds
            rest -= amount * unit.milliseconds
            words.append("\(amount) \(amount == 1 ? unit.singular : unit.plural)")
            short += "\(amount)\(unit.suffix)"
        }
        return words.isEmpty ? ("0 seconds", "0s") : (words.joined(separator: " "), short)
    }
}
