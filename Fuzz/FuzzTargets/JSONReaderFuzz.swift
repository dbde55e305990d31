import PushHub

/// The JSON reader on any bytes.
///
/// Property: a text it accepts, written by `JSONWriter` and read again, gives an equal value,
/// and writing that value gives the same bytes (the canonical form is a fixed point; `==` on
/// strings is Unicode canonical equivalence, the bytes are not).
enum JSONReaderFuzz {
    static func run(_ data: UnsafeRawBufferPointer) throws(PropertyViolation) {
        guard let value = try? JSONReader.parse(data) else { return }
        try checkRoundTrip(value)
    }

    /// Written, read and written again: the same value and the same bytes.
    static func checkRoundTrip(_ value: JSONValue) throws(PropertyViolation) {
        let written = JSONWriter.write(value)
        let reread: JSONValue
        do {
            reread = try JSONReader.parse(written)
        } catch {
            throw PropertyViolation(
                description: "the writer's \(String(decoding: written, as: UTF8.self)) is refused: \(error)")
        }
        try check(reread == value, "\(value) was read back as \(reread)")
        let rewritten = JSONWriter.write(reread)
        try check(
            rewritten == written,
            "written twice: \(String(decoding: written, as: UTF8.self)) then \(String(decoding: rewritten, as: UTF8.self))"
        )
    }
}
