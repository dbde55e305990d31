import Testing

@testable import PushHub

/// `HubRecord`'s JSON: what the journal, the snapshot and the shared log (scaled out) store.
@Suite struct HubRecordTests {
    static func decodedVersion(_ json: JSONValue) throws -> ScreenVersion {
        guard case .screenPublished(let version) = try HubRecord(json: json) else {
            Issue.record("not a screen_published record: \(json)")
            throw HubRecord.DecodingError(description: "wrong kind")
        }
        return version
    }

    @Test("a published version keeps its author, message and rollback_of through its record")
    func historyFieldsRoundTrip() throws {
        let version = ScreenVersion(
            name: "home", version: 4, tree: .object(["n": .number(1)]), publishedAt: 9, author: "ci",
            message: "back to the spring banner — \"v1\"", rollbackOf: 1)
        let json = HubRecord.screenPublished(version).json
        #expect(json["author"] == .string("ci"))
        #expect(json["rollback_of"] == .number(1))
        // Through the bytes, as the journal and Redis hold it.
        let decoded = try Self.decodedVersion(try JSONReader.parse(JSONWriter.write(json)))
        #expect(decoded.name == "home" && decoded.version == 4 && decoded.publishedAt == 9)
        #expect(decoded.tree == version.tree)
        #expect(decoded.author == "ci")
        #expect(decoded.message == "back to the spring banner — \"v1\"")
        #expect(decoded.rollbackOf == 1)
    }

    @Test("a version without author, message or rollback_of writes none of them, and reads back without them")
    func plainVersionRoundTrip() throws {
        let json = HubRecord.screenPublished(
            ScreenVersion(name: "home", version: 1, tree: .object([:]), publishedAt: 5)
        ).json
        #expect(json["author"] == nil && json["message"] == nil && json["rollback_of"] == nil)
        let decoded = try Self.decodedVersion(json)
        #expect(decoded.author == nil && decoded.message == nil && decoded.rollbackOf == nil)
    }

    @Test("a record written before versions had authors (or with them null) still decodes")
    func recordOfAnOlderHub() throws {
        let old = try JSONReader.parse(
            #"{"kind":"screen_published","screen":"home","version":3,"at":7,"tree":{"a":1}}"#)
        let decoded = try Self.decodedVersion(old)
        #expect(decoded.version == 3 && decoded.author == nil && decoded.message == nil && decoded.rollbackOf == nil)
        let nulls = try JSONReader.parse(
            #"{"kind":"screen_published","screen":"home","version":3,"at":7,"tree":{},"author":null,"message":null,"rollback_of":null}"#
        )
        #expect(try Self.decodedVersion(nulls).author == nil)
    }

    @Test(
        "an author, message or rollback_of of the wrong type is refused, naming the field",
        arguments: [
            (#""author":7"#, "\"author\" is missing or not a string"),
            (#""message":["x"]"#, "\"message\" is missing or not a string"),
            (#""rollback_of":"v1""#, "\"rollback_of\" is missing or not an integer"),
        ])
    func wrongTypes(_ field: String, _ description: String) throws {
        let json = try JSONReader.parse(
            #"{"kind":"screen_published","screen":"home","version":3,"at":7,"tree":{},"# + field + "}")
        #expect(throws: HubRecord.DecodingError.self) { try HubRecord(json: json) }
        do {
            _ = try HubRecord(json: json)
        } catch {
            #expect(error.description == description)
        }
    }

    @Test("a snapshot of the state carries each kept version's author, message and rollback_of")
    func snapshotCarriesHistory() throws {
        var state = HubState(keepVersions: 4)
        state.apply(
            .screenPublished(ScreenVersion(name: "s", version: 1, tree: .number(1), publishedAt: 1, author: "root")))
        state.apply(
            .screenPublished(
                ScreenVersion(
                    name: "s", version: 2, tree: .number(2), publishedAt: 2, author: "ci", message: "two")))
        state.apply(
            .screenPublished(
                ScreenVersion(name: "s", version: 3, tree: .number(1), publishedAt: 3, author: "ci", rollbackOf: 1)))
        var restored = HubState(keepVersions: 4)
        for record in state.snapshotRecords() { restored.apply(try HubRecord(json: record.json)) }
        let versions = try #require(restored.view.screens["s"])
        #expect(versions.map(\.author) == ["root", "ci", "ci"])
        #expect(versions.map(\.message) == [nil, "two", nil])
        #expect(versions.map(\.rollbackOf) == [nil, nil, 1])
    }
}
