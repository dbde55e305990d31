/// One line of the results log (DESIGN §6 "Goals and results"): a unit was first served a
/// variant's rendition, confirmed it drew it, or reported a goal event. Immutable (a class:
/// session actions and loop events carry a reference).
///
/// As a line of the log (`exposures.jsonl` in the data dir, or an entry of the shared stream):
/// ```
/// {"ts":…,"event":"served","experiment":"k","salt":"s","variant":"b","unit":"u17","screen":"home","version":4}
/// {"ts":…,"event":"confirmed", …the same members…}
/// {"ts":…,"event":"track","unit":"u17","goal":"purchase","value":12.5}
/// {"ts":…,"event":"release_served","unit":"u17","screen":"home","release":"r-43"}
/// {"ts":…,"event":"release_rendered", …the same members…}
/// {"ts":…,"event":"release_error", …the same members…,"component":"Carousel","message":"…"}
/// ```
/// (Release events, DESIGN §15, share the log so that a release's counts are durable and cover
/// every hub exactly as experiment results do.)
/// Invariant: `ResultEvent(json: event.json, …)` restores an equal event.
final class ResultEvent: Sendable {
    enum Kind: Equatable, Sendable {
        /// The unit was served `variant` of `experiment` (in the phase `salt` names: results start
        /// afresh when the salt changes) on `screen` at `version`.
        case served(Exposure)
        /// The unit's app reported it drew a version of `screen` at or after the one served.
        case confirmed(Exposure)
        /// The unit's app reported goal `event` (`value` optional).
        case goal(event: String, value: Double?)
        /// The unit was served a release's candidate, rendered it, or failed to.
        case release(ReleaseReport)
    }

    /// What a unit did with a release's candidate (DESIGN §15).
    enum ReleaseOutcome: Equatable, Sendable {
        case served
        case rendered
        case errored(component: String?, message: String?)

        var eventName: String {
            switch self {
            case .served: "release_served"
            case .rendered: "release_rendered"
            case .errored: "release_error"
            }
        }
    }

    struct ReleaseReport: Equatable, Sendable {
        var screen: String
        var release: String
        var outcome: ReleaseOutcome
    }

    /// Where an exposure happened.
    struct Exposure: Equatable, Sendable {
        var experiment: String
        var salt: String
        var variant: String
        var screen: String
        var version: Int

        func write(_ event: String, into members: inout JSONObject) {
            members["event"] = .string(event)
            members["experiment"] = .string(experiment)
            members["salt"] = .string(salt)
            members["variant"] = .string(variant)
            members["screen"] = .string(screen)
            members["version"] = .number(Double(version))
        }
    }

    let kind: Kind
    let unit: String
    /// Milliseconds since the Unix epoch.
    let at: Int

    init(_ kind: Kind, unit: String, at: Int) {
        self.kind = kind
        self.unit = unit
        self.at = at
    }

    /// The exposure of a `served` or `confirmed` event.
    var exposure: Exposure? {
        switch kind {
        case .served(let exposure), .confirmed(let exposure): exposure
        case .goal, .release: nil
        }
    }

    var json: JSONValue {
        var members: JSONObject = ["ts": .number(Double(at)), "unit": .string(unit)]
        switch kind {
        case .served(let exposure):
            exposure.write("served", into: &members)
        case .confirmed(let exposure):
            exposure.write("confirmed", into: &members)
        case .goal(let event, let value):
            members["event"] = .string("track")
            members["goal"] = .string(event)
            if let value { members["value"] = .number(value) }
        case .release(let report):
            members["event"] = .string(report.outcome.eventName)
            members["screen"] = .string(report.screen)
            members["release"] = .string(report.release)
            if case .errored(let component, let message) = report.outcome {
                if let component { members["component"] = .string(component) }
                if let message { members["message"] = .string(message) }
            }
        }
        return .object(members)
    }

    /// Reads a line of the log; nil when it is not one (a damaged line is skipped by the
    /// reader, which counts it). Lines written before results had phases carry no `salt`: they
    /// count in the phase `saltOf` gives (the experiment's salt when the log is read).
    init?(json: JSONValue, saltOf: (String) -> String) {
        guard let at = json["ts"]?.intValue, let unit = json["unit"]?.stringValue,
            let event = json["event"]?.stringValue
        else { return nil }
        self.at = at
        self.unit = unit
        if event == "track" {
            guard let goal = json["goal"]?.stringValue else { return nil }
            let value = json["value"]
            guard value == nil || value?.numberValue != nil else { return nil }
            kind = .goal(event: goal, value: value?.numberValue)
            return
        }
        if let outcome = Self.releaseOutcome(event, json: json) {
            guard let screen = json["screen"]?.stringValue, let release = json["release"]?.stringValue else {
                return nil
            }
            kind = .release(ReleaseReport(screen: screen, release: release, outcome: outcome))
            return
        }
        guard let experiment = json["experiment"]?.stringValue, let variant = json["variant"]?.stringValue,
            let screen = json["screen"]?.stringValue, let version = json["version"]?.intValue
        else { return nil }
        let exposure = Exposure(
            experiment: experiment, salt: json["salt"]?.stringValue ?? saltOf(experiment), variant: variant,
            screen: screen, version: version)
        switch event {
        case "served": kind = .served(exposure)
        case "confirmed": kind = .confirmed(exposure)
        default: return nil
        }
    }
}

extension ResultEvent {
    /// The release outcome a line's `event` names (nil: not a release event, or a member of the
    /// wrong type).
    private static func releaseOutcome(_ event: String, json: JSONValue) -> ReleaseOutcome? {
        switch event {
        case "release_served": return .served
        case "release_rendered": return .rendered
        case "release_error":
            let component = json["component"], message = json["message"]
            guard component == nil || component?.stringValue != nil, message == nil || message?.stringValue != nil
            else { return nil }
            return .errored(component: component?.stringValue, message: message?.stringValue)
        default: return nil
        }
    }

    /// `events` as lines of the log (JSONL).
    static func lines(_ events: [ResultEvent]) -> [UInt8] {
        var lines: [UInt8] = []
        for event in events {
            JSONWriter.write(event.json, to: &lines)
            lines.append(0x0A)
        }
        return lines
    }

    /// The events of complete lines; a line that is not one (not JSON, or not an event) is
    /// skipped and counted.
    static func events(inLines bytes: ArraySlice<UInt8>, saltOf: (String) -> String) -> (
        events: [ResultEvent], skipped: Int
    ) {
        var events: [ResultEvent] = []
        var skipped = 0
        bytes.withUnsafeBytes { all in
            var start = 0
            while start < all.count {
                let end = all[start...].firstIndex(of: 0x0A) ?? all.count
                defer { start = end + 1 }
                guard end > start else { continue }  // an empty line
                let raw = UnsafeRawBufferPointer(rebasing: all[start..<end])
                if let event = ResultLineReader.event(raw, saltOf: saltOf) {
                    events.append(event)
                    // A line the fast reader declines is read in full; one that is not JSON (`try?`)
                    // is skipped like JSON that is not an event.
                } else if let json = try? JSONReader.parse(raw, maxDepth: 4),
                    let event = ResultEvent(json: json, saltOf: saltOf)
                {
                    events.append(event)
                } else {
                    skipped += 1
                }
            }
        }
        return (events, skipped)
    }
}
