import PushHub

/// RFC 6902 JSON Patch: reading a patch document and applying it to a document.
///
/// Input: a JSON document, NUL, a JSON patch document (see `JSONPair`); otherwise a document
/// and operations generated from the bytes, with paths that mostly lead into the document.
///
/// Properties:
/// - a patch read from JSON, written as JSON (`json`) and read again is the same patch (the
///   pointers' `~0`/`~1` escapes round-trip);
/// - applying the whole patch gives what applying its operations one at a time gives, or fails
///   at the same operation with the same message (`apply` is all-or-nothing);
/// - the result is a JSON value the writer and reader round-trip.
///
/// A patch that copies a subtree into itself doubles the tree per operation; such results are
/// not compared once they exceed `maxNodes` (the hub never applies patches: `hubctl watch`
/// applies the hub's own, which `JSONPatchDiffFuzz` checks).
enum JSONPatchFuzz {
    static let maxNodes = 20_000

    static func run(_ data: UnsafeRawBufferPointer) throws(PropertyViolation) {
        let document: JSONValue
        let patch: JSONPatch
        if let (a, b) = JSONPair.parse(data) {
            guard let read = try? JSONPatch(json: b) else { return }
            document = a
            patch = read
        } else {
            var generator = JSONTreeGenerator(FuzzInput(data))
            document = generator.value()
            patch = JSONPatch(generator.operations(into: document))
        }

        let rewritten = JSONWriter.write(patch.json)
        let reread = try? JSONPatch(json: JSONReader.parse(rewritten))
        try check(
            reread == patch,
            "\(String(decoding: rewritten, as: UTF8.self)) read back as \(String(describing: reread)) instead of \(patch)"
        )

        var stepwise = document
        var stepFailure: (operation: Int, message: String)?
        for (i, operation) in patch.operations.enumerated() {
            do {
                stepwise = try JSONPatch([operation]).apply(to: stepwise)
            } catch {
                stepFailure = (i, error.message)
                break
            }
            guard stepwise.hasAtMost(nodes: maxNodes) else { return }
        }
        let whole = Result { () throws(JSONPatch.ApplyError) in try patch.apply(to: document) }
        switch (whole, stepFailure) {
        case (.success(let result), nil):
            try check(result == stepwise, "applied whole: \(result); one operation at a time: \(stepwise)")
            try JSONReaderFuzz.checkRoundTrip(result)
        case (.failure(let error), let stepError?):
            try check(
                error.operation == stepError.operation && error.message == stepError.message,
                "applied whole: \(error); one operation at a time: \(stepError)")
        default:
            try check(false, "applied whole: \(whole); one operation at a time: \(String(describing: stepFailure))")
        }
    }
}

extension JSONTreeGenerator {
    /// Up to seven operations of every kind, with paths into `document` and small values.
    mutating func operations(into document: JSONValue) -> [JSONPatch.Operation] {
        (0..<Int(input.byte() % 8)).map { _ in
            let kind = input.byte() % 6
            let path = pointer(into: document)
            switch kind {
            case 0: return .add(path, value(depth: maxDepth - 2))
            case 1: return .remove(path)
            case 2: return .replace(path, value(depth: maxDepth - 2))
            case 3: return .move(from: pointer(into: document), to: path)
            case 4: return .copy(from: pointer(into: document), to: path)
            default: return .test(path, input.byte() % 2 == 0 ? value(depth: maxDepth - 1) : document)
            }
        }
    }
}
