import Foundation
import Testing

@testable import ScreenTree

/// The shared client cases (Tests/ClientCases/cases.json, also run by the JS and Java clients'
/// tests): RFC 8785 canonical forms and screen hashes, RFC 6902 patches. Each failing case is named.
@Suite struct ClientCasesTests {
    static let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("ClientCases/cases.json")

    /// The cases of one kind ("canonical" or "patch"), read with our own reader.
    static func cases(_ kind: String) throws -> [(name: String, fields: JSONValue)] {
        let bytes = try Data(contentsOf: file)
        let root = try JSONReader.parse(Array(bytes))
        let cases = try #require(root[kind]?.arrayValue, "cases.json has no \(kind) array")
        return try cases.enumerated().map { index, fields in
            (try #require(fields["name"]?.stringValue, "\(kind) case \(index) has no name"), fields)
        }
    }

    @Test("canonical cases: JSONWriter writes the RFC 8785 form, ScreenHash its SHA-256")
    func canonical() throws {
        let cases = try Self.cases("canonical")
        #expect(cases.count >= 60)
        for (name, fields) in cases {
            let input = try #require(fields["input"]?.stringValue, "\(name): no input")
            let canonical = try #require(fields["canonical"]?.stringValue, "\(name): no canonical")
            let hash = try #require(fields["hash"]?.stringValue, "\(name): no hash")
            let value: JSONValue
            do {
                value = try JSONReader.parse(input)
            } catch {
                Issue.record("\(name): the input is refused: \(error)")
                continue
            }
            #expect(JSONWriter.string(value) == canonical, "\(name)")
            #expect(ScreenHash.of(value) == hash, "\(name)")
            // The canonical form reads back as the same value and is its own canonical form.
            #expect((try? JSONReader.parse(canonical)) == value, "\(name): the canonical form reads back differently")
        }
    }

    @Test("patch cases: JSONPatch applies RFC 6902, or refuses the patch")
    func patch() throws {
        let cases = try Self.cases("patch")
        #expect(cases.count >= 50)
        for (name, fields) in cases {
            let document = try #require(fields["doc"], "\(name): no doc")
            let operations = try #require(fields["ops"], "\(name): no ops")
            let result = Result { () throws(JSONPatch.ApplyError) in
                try JSONPatch(json: operations).apply(to: document)
            }
            switch (result, fields["expected"], fields["error"]) {
            case (.success(let patched), let expected?, nil):
                #expect(patched == expected, "\(name): got \(JSONWriter.string(patched))")
            case (.failure(let error), _?, nil):
                Issue.record("\(name): refused (\(error)), expected a result")
            case (.success(let patched), nil, let why?):
                let reason = why.stringValue ?? JSONWriter.string(why)
                Issue.record("\(name): applied (\(JSONWriter.string(patched))), expected an error: \(reason)")
            case (.failure, nil, _?):
                break
            case (_, _, _):
                Issue.record("\(name): a case has either expected or error")
            }
        }
    }
}
