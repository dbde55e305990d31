/// A fuzzer's input read front to back: a few bytes of settings, then the data under test.
///
/// Invariant: reading never fails — past the end every byte is 0 — so every input, however
/// short, is a valid program and a longer one only adds to it.
struct FuzzInput {
    let bytes: UnsafeRawBufferPointer
    private(set) var offset = 0

    init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    mutating func byte() -> UInt8 {
        guard offset < bytes.count else { return 0 }
        defer { offset += 1 }
        return bytes[offset]
    }

    /// Everything not read yet; reading ends.
    mutating func rest() -> [UInt8] {
        guard offset < bytes.count else { return [] }
        defer { offset = bytes.count }
        return Array(bytes[offset...])
    }

    /// The NUL-separated parts of `bytes` (NUL never occurs in a JSON text, a request head
    /// the parser accepts, a token or a command-line argument, so it is a safe separator).
    static func split(_ bytes: UnsafeRawBufferPointer) -> [[UInt8]] {
        var parts: [[UInt8]] = [[]]
        for byte in bytes {
            if byte == 0 { parts.append([]) } else { parts[parts.count - 1].append(byte) }
        }
        return parts
    }
}
