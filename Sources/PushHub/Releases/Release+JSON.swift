/// A release as the journal keeps it and as the admin API shows it (one form for both; the admin
/// answer adds the health, `ReleaseRoutes`).
///
/// Invariant: `Release(recordJSON: .object(release.recordJSON))` restores an equal release
/// (percents are kept in basis points and written as `basisPoints / 100`, which reads back to the
/// same basis points).
extension Release {
    var json: JSONObject {
        var members: JSONObject = [
            "release": .string(id), "screen": .string(screen), "base_version": .number(Double(baseVersion)),
            "version": .number(Double(candidate.version)), "status": .string(status.rawValue),
            "percent": ReleaseExposure.percent(basisPoints: basisPoints),
            "qa_cohort": qaCohort.map(JSONValue.string) ?? .null, "guard": healthGuard.json,
            "created_at": .number(Double(startedAt)), "author": candidate.author.map(JSONValue.string) ?? .null,
            "message": candidate.message.map(JSONValue.string) ?? .null,
            "steps": .array(steps.map { .object($0.json) }),
        ]
        if let halt {
            var described: JSONObject = [
                "at": .number(Double(steps.last!.at)), "by": .string(steps.last!.actor), "reason": .string(halt.reason),
            ]
            if let numbers = halt.numbers { for (key, value) in numbers.json { described[key] = value } }
            members["halt"] = .object(described)
            members["revert_version"] = .number(Double(halt.revertVersion))
        } else {
            members["halt"] = .null
            members["revert_version"] = .null
        }
        return members
    }

    /// The record form: the answer's members plus the candidate's tree.
    var recordJSON: JSONObject {
        var members = json
        members["tree"] = candidate.tree
        return members
    }

    init(recordJSON json: JSONValue) throws(HubRecord.DecodingError) {
        func fail(_ what: String) -> HubRecord.DecodingError {
            HubRecord.DecodingError(description: "release: \(what)")
        }
        guard let screen = json["screen"]?.stringValue, let base = json["base_version"]?.intValue,
            let version = json["version"]?.intValue, let tree = json["tree"],
            let stepList = json["steps"]?.arrayValue, !stepList.isEmpty
        else { throw fail("screen, base_version, version, tree and steps are required") }
        let healthGuard: ReleaseGuard
        do {
            healthGuard = try ReleaseGuard(json: json["guard"])
        } catch {
            throw fail(error.message)
        }
        var steps: [Step] = []
        for element in stepList { steps.append(try Step(json: element)) }
        let qaCohort = json["qa_cohort"]?.stringValue
        self.init(
            screen: screen, baseVersion: base,
            candidate: ScreenVersion(
                name: screen, version: version, tree: tree, publishedAt: steps[0].at,
                author: json["author"]?.stringValue, message: json["message"]?.stringValue),
            qaCohort: qaCohort, healthGuard: healthGuard, steps: steps)
    }
}

extension Release.Step {
    var json: JSONObject {
        var members: JSONObject = ["at": .number(Double(at)), "actor": .string(actor)]
        switch action {
        case .start(let points):
            members["action"] = .string("start")
            members["percent"] = ReleaseExposure.percent(basisPoints: points)
        case .percent(let points):
            members["action"] = .string("percent")
            members["percent"] = ReleaseExposure.percent(basisPoints: points)
        case .promote:
            members["action"] = .string("promote")
        case .halt(let halt):
            members["action"] = .string("halt")
            members["reason"] = .string(halt.reason)
            members["revert_version"] = .number(Double(halt.revertVersion))
            if let numbers = halt.numbers { members["numbers"] = .object(numbers.json) }
        }
        return members
    }

    init(json: JSONValue) throws(HubRecord.DecodingError) {
        func fail(_ what: String) -> HubRecord.DecodingError {
            HubRecord.DecodingError(description: "release step: \(what)")
        }
        guard let at = json["at"]?.intValue, let actor = json["actor"]?.stringValue,
            let action = json["action"]?.stringValue
        else { throw fail("at, actor and action are required") }
        func points() throws(HubRecord.DecodingError) -> Int {
            guard let percent = json["percent"]?.numberValue, let points = ReleaseExposure.basisPoints(percent: percent)
            else { throw fail("\(action) needs a percent from 0 to 100") }
            return points
        }
        switch action {
        case "start": self.init(at: at, actor: actor, action: .start(basisPoints: try points()))
        case "percent": self.init(at: at, actor: actor, action: .percent(basisPoints: try points()))
        case "promote": self.init(at: at, actor: actor, action: .promote)
        case "halt":
            guard let reason = json["reason"]?.stringValue, let revert = json["revert_version"]?.intValue else {
                throw fail("halt needs reason and revert_version")
            }
            var numbers: ReleaseHealth.Counts?
            if let counts = json["numbers"] {
                guard let exposed = counts["exposed"]?.intValue, let rendered = counts["rendered"]?.intValue,
                    let errored = counts["errored"]?.intValue, let reported = counts["reported"]?.intValue
                else { throw fail("a halt's numbers are exposed, rendered, errored and reported") }
                numbers = ReleaseHealth.Counts(
                    exposed: exposed, rendered: rendered, errored: errored, reported: reported)
            }
            self.init(
                at: at, actor: actor,
                action: .halt(Release.Halt(reason: reason, numbers: numbers, revertVersion: revert)))
        default:
            throw fail("unknown action \"\(action)\"")
        }
    }
}
