import Foundation
import FuzzTargets
import Testing

/// Every file of the fuzzing corpus (Fuzz/corpus/<target>/) through every fuzz target: the
/// seeds, and each input a fuzzer once failed on, stay passing tests.
@Suite struct FuzzCorpusTests {
    /// One corpus file: its path and bytes.
    struct Input: Sendable {
        var path: String
        var target: String
        var bytes: [UInt8]
    }

    /// Every file under Fuzz/corpus, read once (by whichever test first needs it).
    static let corpus: [Input] = {
        let root = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fuzz/corpus")
        return FuzzTarget.all.flatMap { target -> [Input] in
            let folder = root.appendingPathComponent(target.name)
            let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
            return names.sorted().compactMap { name in
                let path = folder.appendingPathComponent(name).path
                return FileManager.default.contents(atPath: path).map {
                    Input(path: path, target: target.name, bytes: [UInt8]($0))
                }
            }
        }
    }()

    @Test("each target has seeds, none longer than its -max_len")
    func seeds() {
        for target in FuzzTarget.all {
            let inputs = Self.corpus.filter { $0.target == target.name }
            #expect(inputs.count >= 5, "Fuzz/corpus/\(target.name) has \(inputs.count) files")
            for input in inputs { #expect(input.bytes.count <= target.maxLength, "\(input.path)") }
        }
    }

    @Test("every corpus file holds every target's properties", arguments: FuzzTarget.all.map(\.name))
    func replay(_ name: String) throws {
        let target = try #require(FuzzTarget.named(name))
        for input in Self.corpus {
            #expect(throws: Never.self, "\(input.path)") { try input.bytes.withUnsafeBytes { try target.run($0) } }
        }
    }
}
