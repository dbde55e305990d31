import Testing

@testable import PushHub

@Suite struct AssignmentTests {
    static func experiment(_ json: String, key: String? = nil) -> Experiment {
        let value = try! JSONReader.parse(json)
        return try! Experiment(key: key ?? value["key"]!.stringValue!, json: value)
    }

    static let layout = experiment(
        #"{"key":"breakdown-layout","salt":"2019-02","status":"running","variants":[{"key":"control","weight":1},{"key":"compact","weight":1}]}"#
    )
    static let weighted = experiment(
        #"{"key":"w","salt":"s","traffic":0.3,"variants":[{"key":"a","weight":1},{"key":"b","weight":2},{"key":"c","weight":7}]}"#
    )

    @Test("golden vectors computed by the Python reference (docs/assignment.md)")
    func golden() {
        #expect(Assignment.bucket("2019-02/breakdown-layout/u17") == 9161)
        #expect(Assignment.bucket("2019-02/breakdown-layout/u17/variant") == 180)
        #expect(Assignment.bucket("layer/checkout/u17") == 6206)
        #expect(Assignment.bucket("s/k/device-1") == 4991)
        #expect(
            (0..<8).map { Assignment.assign(Self.layout, unit: "u\($0)", client: nil, view: nil).variant }
                == ["control", "control", "compact", "compact", "control", "compact", "compact", "compact"])
        #expect(
            (0..<12).map { Assignment.assign(Self.weighted, unit: "u\($0)", client: nil, view: nil).variant }
                == [nil, nil, "c", nil, nil, nil, nil, nil, "c", nil, nil, "c"])
    }

    @Test("raising traffic never moves an assigned unit out or to another variant")
    func ramp() {
        var previous: [String: String] = [:]
        for traffic in stride(from: 0.0, through: 1.0, by: 0.1) {
            let experiment = Self.experiment(
                #"{"key":"ramp","variants":[{"key":"A"},{"key":"B","weight":3}],"traffic":\#(traffic)}"#)
            for n in 0..<3000 {
                let unit = "r\(n)"
                let variant = Assignment.assign(experiment, unit: unit, client: nil, view: nil).variant
                if let before = previous[unit] { #expect(variant == before, "unit \(unit) at traffic \(traffic)") }
                if let variant { previous[unit] = variant }
            }
        }
        #expect(previous.count == 3000)
    }

    @Test("with sticky, changing weights moves nobody already assigned; without, it does")
    func sticky() throws {
        var view = HubView()
        let before = Self.experiment(
            #"{"key":"st","sticky":true,"status":"running","variants":[{"key":"A","weight":1},{"key":"B","weight":1}]}"#
        )
        let after = Self.experiment(
            #"{"key":"st","sticky":true,"status":"running","variants":[{"key":"A","weight":1},{"key":"B","weight":9}]}"#
        )
        let units = (0..<2000).map { "s\($0)" }
        let first = units.map { unit in
            let variant = view.assignment(before, unit: unit, client: nil).variant!
            view.apply(.stickyRecorded(experiment: "st", unit: unit, variant: variant), keepVersions: 1)
            return variant
        }
        let second = units.map { view.assignment(after, unit: $0, client: nil).variant }
        #expect(first == second)
        let unsticky = units.map { Assignment.assign(after, unit: $0, client: nil, view: nil).variant }
        #expect(unsticky != first)  // the hash alone would have moved some
    }

    @Test("overrides always win; the audience gates entry")
    func overridesAndAudience() {
        let experiment = Self.experiment(
            #"""
            {"key":"aud","traffic":0,"variants":[{"key":"A"},{"key":"B"}],"overrides":{"vip":"B"},
             "audience":{"platform":["ios"],"app_version":">=5.0.0"}}
            """#)
        #expect(
            Assignment.assign(experiment, unit: "vip", client: nil, view: nil) == .variant("B", reason: "override"))
        func client(_ platform: String, _ version: String) -> ClientAttributes {
            ClientAttributes(
                session: "", user: "u1", device: "d", platform: platform, appVersion: SemanticVersion(version),
                claimCohorts: [], claims: JSONObject(), connectedAt: 0)
        }
        #expect(
            Assignment.assign(experiment, unit: "u1", client: client("android", "6.0.0"), view: nil).reason
                == "audience: platform")
        #expect(
            Assignment.assign(experiment, unit: "u1", client: client("ios", "4.9.0"), view: nil).reason
                == "audience: app_version")
        #expect(
            Assignment.assign(experiment, unit: "u1", client: client("ios", "5.1.0"), view: nil).reason == "traffic")
    }

    @Test("RFC 7386 merge patch")
    func mergePatch() throws {
        let target = try JSONReader.parse(#"{"a":"b","c":{"d":"e","f":"g"}}"#)
        let patch = try JSONReader.parse(#"{"a":"z","c":{"f":null}}"#)
        #expect(MergePatch.apply(patch, to: target) == (try JSONReader.parse(#"{"a":"z","c":{"d":"e"}}"#)))
        #expect(MergePatch.apply(try JSONReader.parse("[1]"), to: target) == (try JSONReader.parse("[1]")))
    }
}
