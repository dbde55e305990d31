/// When a release halts by itself (DESIGN §15 "Guard"): once at least `minUnits` exposed units
/// reported on the candidate (rendered it or reported an error) and the share of them that
/// reported an error is above `maxErrorRate`.
struct ReleaseGuard: Sendable, Equatable {
    var maxErrorRate: Double
    var minUnits: Int

    static let standard = ReleaseGuard(maxErrorRate: 0.02, minUnits: 50)

    init(maxErrorRate: Double, minUnits: Int) {
        self.maxErrorRate = maxErrorRate
        self.minUnits = minUnits
    }

    /// Why `counts` halt the release, naming the numbers; nil while they do not.
    func trips(on counts: ReleaseHealth.Counts) -> String? {
        guard counts.reported >= minUnits, counts.errorRate > maxErrorRate else { return nil }
        return "error rate \(Self.percent(counts.errorRate)) (\(counts.errored) of \(counts.reported) reporting units) "
            + "is above the guard's \(Self.percent(maxErrorRate)) (at least \(minUnits) units)"
    }

    /// `0.2` as "20%", `0.0125` as "1.25%".
    private static func percent(_ rate: Double) -> String {
        let hundredths = (rate * 10_000).rounded()
        let whole = Int(hundredths) / 100, fraction = Int(hundredths) % 100
        if fraction == 0 { return "\(whole)%" }
        return fraction % 10 == 0 ? "\(whole).\(fraction / 10)%" : "\(whole).\(fraction < 10 ? "0" : "")\(fraction)%"
    }

    var json: JSONValue {
        .object(["max_error_rate": .number(maxErrorRate), "min_units": .number(Double(minUnits))])
    }

    /// Reads a guard from a request or a record; members left out (or a null guard) take the
    /// standard values.
    init(json value: JSONValue?) throws(InputError) {
        self = Self.standard
        guard let value, value != .null else { return }
        func refuse(_ message: String) -> InputError { InputError("bad_guard", message) }
        guard let members = value.objectValue else { throw refuse("\"guard\" must be an object") }
        for (key, _) in members where key != "max_error_rate" && key != "min_units" {
            throw refuse("\"guard\" has max_error_rate and min_units, not \"\(key)\"")
        }
        if let rate = members["max_error_rate"] {
            guard let number = rate.numberValue, (0...1).contains(number) else {
                throw refuse("\"guard.max_error_rate\" must be a number from 0 to 1")
            }
            maxErrorRate = number
        }
        if let units = members["min_units"] {
            guard let number = units.intValue, number >= 1 else {
                throw refuse("\"guard.min_units\" must be an integer of at least 1")
            }
            minUnits = number
        }
    }
}
