/// What the exposed clients of one release reported (DESIGN §15), folded from the results log in
/// its order, so every hub and every restart holds the same numbers.
///
/// A unit counts once in each set however many sessions it has; a report counts only for a unit
/// the log says was served the candidate first (as a goal counts only after exposure).
///
/// Invariants: `counts` equals what `units` holds; `byComponent` has at most `maxComponents`
/// names; `recentErrors` at most `maxRecentErrors`, oldest first.
struct ReleaseHealth: Sendable {
    /// The numbers the guard judges.
    struct Counts: Sendable, Equatable {
        var exposed = 0
        var rendered = 0
        var errored = 0
        /// Units that rendered the candidate or reported an error for it.
        var reported = 0

        /// errored ÷ reported; 0 while nobody reported.
        var errorRate: Double { reported == 0 ? 0 : Double(errored) / Double(reported) }

        var json: JSONObject {
            [
                "exposed": .number(Double(exposed)), "rendered": .number(Double(rendered)),
                "errored": .number(Double(errored)), "reported": .number(Double(reported)),
                "error_rate": .number(errorRate),
            ]
        }
    }

    /// One render error as a client described it.
    struct ReportedError: Sendable {
        var at: Int
        var unit: String
        var component: String?
        var message: String?
    }

    static let maxComponents = 100
    static let maxRecentErrors = 20
    /// The component name errors without one are counted under.
    static let unnamedComponent = "(none)"

    private(set) var counts = Counts()
    /// Render errors per component (the first `maxComponents` names; later ones are not counted here).
    private(set) var byComponent: [String: Int] = [:]
    private(set) var recentErrors: [ReportedError] = []
    /// What each unit (by `ResultsTally.unitKey`) was seen doing.
    private var units: [Int: ReleaseReports] = [:]

    /// Folds one report of a unit (`unitKey`: `ResultsTally.unitKey(event.unit)`).
    mutating func fold(_ outcome: ResultEvent.ReleaseOutcome, unit: String, unitKey: Int, at: Int) {
        var seen = units[unitKey] ?? []
        switch outcome {
        case .served:
            guard !seen.contains(.served) else { return }
            seen.insert(.served)
            counts.exposed += 1
        case .rendered:
            guard seen.contains(.served), !seen.contains(.rendered) else { return }
            if !seen.contains(.errored) { counts.reported += 1 }
            seen.insert(.rendered)
            counts.rendered += 1
        case .errored(let component, let message):
            guard seen.contains(.served) else { return }
            if !seen.contains(.errored) {
                if !seen.contains(.rendered) { counts.reported += 1 }
                seen.insert(.errored)
                counts.errored += 1
                let name = component ?? Self.unnamedComponent
                if byComponent[name] != nil || byComponent.count < Self.maxComponents {
                    byComponent[name, default: 0] += 1
                }
            }
            recentErrors.append(ReportedError(at: at, unit: unit, component: component, message: message))
            if recentErrors.count > Self.maxRecentErrors { recentErrors.removeFirst() }
        }
        units[unitKey] = seen
    }

    /// Whether folding `outcome` for this unit certainly changes nothing (the log need not hold it).
    func isRepeat(_ outcome: ResultEvent.ReleaseOutcome, unitKey: Int) -> Bool {
        guard let seen = units[unitKey] else { return false }
        switch outcome {
        case .served: return seen.contains(.served)
        case .rendered: return seen.contains(.rendered)
        case .errored: return false  // each error is shown among the recent ones
        }
    }

    var json: JSONObject {
        var members = counts.json
        members["errors_by_component"] = .object(JSONObject(byComponent.mapValues { .number(Double($0)) }))
        members["recent_errors"] = .array(
            recentErrors.map { error in
                .object([
                    "at": .number(Double(error.at)), "unit": .string(error.unit),
                    "component": error.component.map(JSONValue.string) ?? .null,
                    "message": error.message.map(JSONValue.string) ?? .null,
                ])
            })
        return members
    }
}

/// What a unit (or a session) was seen doing with one release's candidate.
struct ReleaseReports: OptionSet, Sendable {
    let rawValue: UInt8
    static let served = ReleaseReports(rawValue: 1)
    static let rendered = ReleaseReports(rawValue: 2)
    static let errored = ReleaseReports(rawValue: 4)
}

/// The health of every release the results log names, by screen and release id.
struct ReleaseTally: Sendable {
    private(set) var health: [String: ReleaseHealth] = [:]

    static func key(screen: String, release: String) -> String { screen + "\u{0}" + release }

    func health(screen: String, release: String) -> ReleaseHealth? {
        health[Self.key(screen: screen, release: release)]
    }

    /// Folds a release event; returns the key of the release it is about (nil: not a release event).
    @discardableResult
    mutating func fold(_ event: ResultEvent, unitKey: Int) -> (screen: String, release: String)? {
        guard case .release(let report) = event.kind else { return nil }
        health[Self.key(screen: report.screen, release: report.release), default: ReleaseHealth()].fold(
            report.outcome, unit: event.unit, unitKey: unitKey, at: event.at)
        return (report.screen, report.release)
    }

    func isRepeat(_ event: ResultEvent, unitKey: Int) -> Bool {
        guard case .release(let report) = event.kind else { return false }
        return health(screen: report.screen, release: report.release)?.isRepeat(report.outcome, unitKey: unitKey)
            ?? false
    }
}
