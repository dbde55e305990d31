/// What a client said it could not render (`render_error`, DESIGN §3, §15).
struct RenderErrorReport: Sendable, Equatable {
    let screen: String
    let version: Int
    let component: String?
    let message: String?
}

/// `client.render_error` webhook events, aggregated (DESIGN §18): per screen and version, the
/// first report makes an event at once; the ones after it within `window` are counted and make
/// one event when the window ends, with up to `maxSamples` distinct (component, message) pairs.
/// A broken screen on a million devices thus makes one event a minute per hub, not a million.
///
/// Invariants: at most `maxKeys` screens and versions are followed at once (reports of others
/// are counted in `overflowed` and dropped); an entry exists while its window runs.
struct RenderErrorDigest {
    struct Key: Hashable {
        let screen: String
        let version: Int
    }

    struct Entry {
        /// When the current window ends (monotonic ns).
        var windowEndsAt: UInt64
        /// Reports not yet in an event, since `since` (Unix ms).
        var count = 0
        var since = 0
        var samples: [JSONValue] = []
    }

    static let window: UInt64 = 60_000_000_000
    static let maxSamples = 5
    static let maxKeys = 10_000

    private(set) var entries: [Key: Entry] = [:]
    private(set) var overflowed = 0
    /// The earliest `windowEndsAt` of `entries` (kept, so that the loop's wait does not look
    /// through every entry).
    private(set) var nextDeadline: UInt64?

    /// Notes `report`; returns the event data to send now (the first report of a window).
    mutating func note(_ report: RenderErrorReport, now: UInt64, wallNow: Int) -> JSONObject? {
        let key = Key(screen: report.screen, version: report.version)
        let sample: JSONValue = .object([
            "component": report.component.map(JSONValue.string) ?? .null,
            "message": report.message.map(JSONValue.string) ?? .null,
        ])
        if var entry = entries[key] {
            if entry.count == 0 { entry.since = wallNow }
            entry.count += 1
            if entry.samples.count < Self.maxSamples && !entry.samples.contains(sample) { entry.samples.append(sample) }
            entries[key] = entry
            return nil
        }
        guard entries.count < Self.maxKeys else {
            overflowed += 1
            return nil
        }
        entries[key] = Entry(windowEndsAt: now + Self.window)
        nextDeadline = min(nextDeadline ?? .max, now + Self.window)
        return Self.data(key, count: 1, since: wallNow, until: wallNow, samples: [sample])
    }

    /// The events of windows that ended by `now`; entries with nothing left go.
    mutating func due(now: UInt64, wallNow: Int) -> [(screen: String, data: JSONObject)] {
        var out: [(screen: String, data: JSONObject)] = []
        for (key, entry) in entries where entry.windowEndsAt <= now {
            if entry.count == 0 {
                entries[key] = nil
                continue
            }
            out.append(
                (
                    key.screen,
                    Self.data(key, count: entry.count, since: entry.since, until: wallNow, samples: entry.samples)
                ))
            entries[key] = Entry(windowEndsAt: now + Self.window)
        }
        nextDeadline = entries.values.lazy.map(\.windowEndsAt).min()
        return out
    }

    private static func data(_ key: Key, count: Int, since: Int, until: Int, samples: [JSONValue]) -> JSONObject {
        [
            "screen": .string(key.screen), "version": .number(Double(key.version)), "errors": .number(Double(count)),
            "since": .number(Double(since)), "until": .number(Double(until)), "samples": .array(samples),
        ]
    }
}
