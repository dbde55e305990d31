import PushHub

/// Diff + encode time for a 10,000-node screen with one changed leaf: a fresh version is
/// rendered (capability filter, canonical bytes, SHA-256), diffed against the previous one and
/// encoded as the outgoing frame, as a publish does once per rendition.
enum DiffTiming {
    /// A screen of `sections` × `items` keyed nodes (plus their leaves: ~10,000 objects).
    static func tree(sections: Int, items: Int, changed: Bool) -> JSONValue {
        .object([
            "type": .string("screen"),
            "children": .array(
                (0..<sections).map { s in
                    .object([
                        "id": .string("section-\(s)"), "type": .string("section"), "title": .string("Section \(s)"),
                        "children": .array(
                            (0..<items).map { i in
                                .object([
                                    "id": .string("item-\(s)-\(i)"), "type": .string("row"),
                                    "label": .string(
                                        changed && s == sections / 2 && i == items / 2 ? "changed" : "Item \(i)"),
                                    "value": .number(Double(s * items + i)),
                                ])
                            }),
                    ])
                }),
        ])
    }

    /// Median microseconds of `body` over `iterations` runs.
    static func median(_ iterations: Int, _ body: () -> Void) -> Double {
        var samples: [UInt64] = []
        for _ in 0..<iterations {
            let start = MonotonicClock.now()
            body()
            samples.append(MonotonicClock.now() - start)
        }
        samples.sort()
        return Double(samples[samples.count / 2]) / 1000
    }

    /// The stages of a publish of the 10,000-node screen, each timed alone.
    static func stages(iterations: Int) -> [(String, Double)] {
        let old = tree(sections: 100, items: 99, changed: false)
        let new = tree(sections: 100, items: 99, changed: true)
        let canonical = JSONWriter.write(new)
        let patch = JSONPatchDiff.diff(old, new)
        return [
            (
                "parse the request body (\(canonical.count) bytes)",
                median(iterations) { _ = try! JSONReader.parse(canonical) }
            ),
            ("find capability thresholds", median(iterations) { _ = Rendition.thresholds(in: new) }),
            ("write the canonical form", median(iterations) { _ = JSONWriter.write(new) }),
            ("SHA-256 of it", median(iterations) { _ = ScreenHash.of(canonical: canonical) }),
            ("diff (one changed leaf)", median(iterations) { _ = JSONPatchDiff.diff(old, new) }),
            (
                "encode the patch frame",
                median(iterations) {
                    _ = ServerMessage.patch(
                        screen: "big", from: 1, version: 2, hash: String(repeating: "0", count: 64), ops: patch)
                }
            ),
        ]
    }

    static func run(iterations: Int) -> (
        medianMicros: Double, p99Micros: Double, patchBytes: Int, snapshotBytes: Int, nodes: Int
    ) {
        let old = ScreenVersion(
            name: "big", version: 1, tree: tree(sections: 100, items: 99, changed: false), publishedAt: 0)
        var cache = RenditionCache()
        _ = cache.rendered(old, for: .latest)
        let newTree = tree(sections: 100, items: 99, changed: true)
        var samples: [UInt64] = []
        var patchBytes = 0
        for iteration in 0..<iterations {
            let new = ScreenVersion(name: "big", version: 2 + iteration, tree: newTree, publishedAt: 0)
            let start = MonotonicClock.now()
            let frame = cache.update(from: old, to: new, for: .latest)
            samples.append(MonotonicClock.now() - start)
            patchBytes = frame?.count ?? 0
        }
        let snapshotBytes = cache.snapshot(old, for: .latest).count
        samples.sort()
        return (
            Double(samples[samples.count / 2]) / 1000,
            Double(samples[min(samples.count - 1, samples.count * 99 / 100)]) / 1000,
            patchBytes, snapshotBytes, 1 + 100 * (1 + 99)
        )
    }
}
