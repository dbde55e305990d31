import PushHub

/// The keyed tree diff of DESIGN §4 on pairs of trees (see `JSONPair`).
///
/// Properties, for the old tree `a` and the new tree `b`:
/// - `diff(a, b)` applied to `a` gives `b`, byte for byte in canonical form (what the screen
///   hash covers), not merely `==` (which calls canonically equivalent strings equal);
/// - so does the patch as a client gets it: written as JSON, read back and applied;
/// - `diff(a, a)` is empty.
enum JSONPatchDiffFuzz {
    static func run(_ data: UnsafeRawBufferPointer) throws(PropertyViolation) {
        let (a, b) = JSONPair.values(data)
        let expected = JSONWriter.write(b)
        let patch = JSONPatchDiff.diff(a, b)
        let patchText = JSONWriter.write(patch.json)
        func describe() -> String {
            "diff(\(JSONWriter.string(a)), \(String(decoding: expected, as: UTF8.self))) = "
                + String(decoding: patchText, as: UTF8.self)
        }
        let applied = Result { () throws(JSONPatch.ApplyError) in try patch.apply(to: a) }
        try check((try? applied.get()).map(JSONWriter.write) == expected, "\(describe()) gives \(applied)")
        let fromJSON = try? JSONPatch(json: JSONReader.parse(patchText)).apply(to: a)
        try check(
            fromJSON.map(JSONWriter.write) == expected,
            "\(describe()) read from JSON gives \(String(describing: fromJSON))")
        let none = JSONPatchDiff.diff(a, a)
        try check(
            none.operations.isEmpty, "diff of \(JSONWriter.string(a)) with itself is \(JSONWriter.string(none.json))")
    }
}
