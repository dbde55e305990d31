import PushHub

/// Two JSON values from one fuzzer input, for the targets that take a document and a patch
/// or an old and a new tree.
///
/// When the input holds a NUL and both sides of the first one are JSON texts, those are the
/// values (the corpus holds such pairs, taken from the tests); otherwise the values are
/// generated from the bytes by `JSONTreeGenerator`, so that every input is a pair.
enum JSONPair {
    /// The JSON texts either side of the input's first NUL, when both are JSON.
    static func parse(_ data: UnsafeRawBufferPointer) -> (JSONValue, JSONValue)? {
        guard let nul = data.firstIndex(of: 0),
            let a = try? JSONReader.parse(UnsafeRawBufferPointer(rebasing: data[..<nul])),
            let b = try? JSONReader.parse(UnsafeRawBufferPointer(rebasing: data[(nul + 1)...]))
        else { return nil }
        return (a, b)
    }

    /// `parse`, or else two trees generated from the bytes.
    static func values(_ data: UnsafeRawBufferPointer) -> (JSONValue, JSONValue) {
        if let pair = parse(data) { return pair }
        var generator = JSONTreeGenerator(FuzzInput(data))
        return (generator.value(), generator.value())
    }
}
