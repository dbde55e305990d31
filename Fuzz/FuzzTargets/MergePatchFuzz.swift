import PushHub

/// RFC 7386 JSON Merge Patch on pairs of a target and a patch (see `JSONPair`).
///
/// Properties, for `result = apply(patch, target)`:
/// - applying the patch again changes nothing (a merge patch is idempotent);
/// - a patch that is not an object is the result; otherwise the result is an object in which
///   every `null` member of the patch is absent and every non-object member is the patch's;
/// - the result round-trips through the writer and reader.
enum MergePatchFuzz {
    static func run(_ data: UnsafeRawBufferPointer) throws(PropertyViolation) {
        let (target, patch) = JSONPair.values(data)
        let result = MergePatch.apply(patch, to: target)
        let describe = {
            "merge(\(JSONWriter.string(patch)), \(JSONWriter.string(target))) = \(JSONWriter.string(result))"
        }
        let again = MergePatch.apply(patch, to: result)
        try check(
            JSONWriter.write(again) == JSONWriter.write(result), "\(describe()), again \(JSONWriter.string(again))")
        if case .object(let changes) = patch {
            guard case .object(let members) = result else {
                throw PropertyViolation(description: "\(describe()) is no object")
            }
            for (key, change) in changes {
                switch change {
                case .null: try check(members[key] == nil, "\(describe()) keeps \(key)")
                case .object: try check(members[key]?.objectValue != nil, "\(describe()) has no object at \(key)")
                default: try check(members[key] == change, "\(describe()) has not \(key) from the patch")
                }
            }
        } else {
            try check(result == patch, "\(describe()) is not the patch")
        }
        try JSONReaderFuzz.checkRoundTrip(result)
    }
}
