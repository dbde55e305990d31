/// When the hub fetches its JWKS (DESIGN §18), as a state machine (STYLE §3): at start; again at
/// the answer's `Cache-Control: max-age` (clamped to `minimumRefresh…maximumRefresh`,
/// `defaultRefresh` without one); after a failure, with backoff from 1 s to 5 min; and on a
/// token naming an unknown kid, at most once per `unknownKidInterval` — a burst of unknown kids
/// makes one fetch. It does no I/O and reads no clock: `JWKSFetcher` fetches and tells the loops.
///
/// Invariants: at most one fetch runs at a time; two fetches started for unknown kids are at
/// least `unknownKidInterval` apart; every fetch's end releases the parked hellos
/// (`.releaseParked`), and so does an unknown kid that may not fetch now — a parked hello waits
/// only for a fetch that runs.
struct JWKSSchedule: Equatable {
    static let unknownKidInterval: UInt64 = 10_000_000_000
    static let minimumRefresh: UInt64 = 60_000_000_000
    static let maximumRefresh: UInt64 = 24 * 3600 * 1_000_000_000
    static let defaultRefresh: UInt64 = 3600 * 1_000_000_000
    /// Retries after failures: 1 s, 2 s, 4 s … at most 5 min.
    static let retry = Backoff(initial: .seconds(1), cap: .seconds(300))

    enum State: Equatable {
        /// Before the first fetch (the control plane's first tick starts it).
        case notStarted
        case fetching(startedAt: UInt64)
        /// Until the next fetch is due.
        case waiting(until: UInt64)
    }

    enum Action: Equatable {
        /// Send the request now.
        case fetch
        /// Tell every loop to verify its parked hellos again (`LoopCommand.keysRefreshed`).
        case releaseParked
        case none
    }

    /// How a fetch ended, for the schedule: `maxAge` is the answer's `Cache-Control` max-age.
    enum Outcome: Equatable {
        case keys(maxAgeSeconds: Int?)
        case failed
    }

    private(set) var state = State.notStarted
    /// When the last fetch started (the unknown-kid interval counts from it).
    private(set) var lastStartedAt: UInt64?
    /// Failures since the last good answer (the retry backoff's attempt).
    private(set) var failures = 0

    /// When `timerFired` must run: now before the first fetch, then the next fetch's time (nil
    /// while one runs: its end comes from the HTTP client, within the request's timeout).
    var nextDeadline: UInt64? {
        switch state {
        case .notStarted: 0
        case .fetching: nil
        case .waiting(let until): until
        }
    }

    mutating func timerFired(now: UInt64) -> Action {
        switch state {
        case .notStarted: return start(now: now)
        case .waiting(let until) where now >= until: return start(now: now)
        case .waiting, .fetching: return .none
        }
    }

    /// A hello's token named a kid no key has.
    mutating func unknownKidReported(now: UInt64) -> Action {
        switch state {
        case .notStarted, .fetching:
            return .none  // the fetch that runs (or starts at the first tick) releases it
        case .waiting(let until):
            if let last = lastStartedAt, now < last + Self.unknownKidInterval {
                // Not now: refused at once, and the provider asked again as soon as allowed.
                state = .waiting(until: min(until, last + Self.unknownKidInterval))
                return .releaseParked
            }
            return start(now: now)
        }
    }

    /// The fetch ended: the next one is due at the answer's max-age, or after a backoff.
    mutating func fetchEnded(_ outcome: Outcome, now: UInt64) -> Action {
        guard case .fetching = state else { return .none }
        switch outcome {
        case .keys(let maxAge):
            failures = 0
            state = .waiting(until: now + Self.refreshInterval(maxAgeSeconds: maxAge))
        case .failed:
            state = .waiting(until: now + Self.retry.ceiling(attempt: failures).nanoseconds)
            failures += 1
        }
        return .releaseParked
    }

    private mutating func start(now: UInt64) -> Action {
        state = .fetching(startedAt: now)
        lastStartedAt = now
        return .fetch
    }

    /// `maxAge` clamped to a minute…a day; an hour without one.
    static func refreshInterval(maxAgeSeconds: Int?) -> UInt64 {
        guard let maxAge = maxAgeSeconds else { return defaultRefresh }
        let nanoseconds = UInt64(clamping: maxAge).multipliedReportingOverflow(by: 1_000_000_000)
        return min(
            max(nanoseconds.overflow ? maximumRefresh : nanoseconds.partialValue, minimumRefresh), maximumRefresh)
    }

    /// The `max-age` of a `Cache-Control` field (RFC 9111 §5.2.2.1), in seconds; 0 for
    /// `no-cache` and `no-store` (the shortest refresh), nil when it says neither.
    static func maxAge(cacheControl: String?) -> Int? {
        guard let cacheControl else { return nil }
        var found: Int?
        for directive in cacheControl.split(separator: ",") {
            let text = directive.trimmingHTTPWhitespace().lowercased()
            if text == "no-cache" || text == "no-store" { return 0 }
            if text.hasPrefix("max-age=") {
                var value = text.dropFirst("max-age=".count)
                if value.hasPrefix("\""), value.hasSuffix("\""), value.count >= 2 {
                    value = value.dropFirst().dropLast()
                }
                if let seconds = Int(value), seconds >= 0 { found = seconds }
            }
        }
        return found
    }
}
