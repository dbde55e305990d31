/// A streaming UTF-8 validator (RFC 3629, as RFC 6455 §8.1 requires of text).
///
/// Feed it the bytes of a message in any number of chunks; it fails on the first byte that
/// cannot start or continue a valid sequence (overlong forms, surrogates and code points above
/// U+10FFFF included), so a bad message is refused as soon as the bad byte arrives.
///
/// Invariants: `state` is `accept` exactly when every byte so far forms complete characters;
/// once `reject`, it stays `reject` until `reset()`.
public struct UTF8Validator: Sendable {
    /// What the next byte must be.
    @usableFromInline enum State: UInt8, Sendable {
        case accept
        case continuation1  // one 80...BF byte ends the character
        case continuation2  // two 80...BF bytes
        case continuation3  // three 80...BF bytes
        case afterE0  // A0...BF, then one more (no overlong 3-byte form)
        case afterED  // 80...9F, then one more (no surrogates)
        case afterF0  // 90...BF, then two more (no overlong 4-byte form)
        case afterF4  // 80...8F, then two more (nothing above U+10FFFF)
        case reject
    }

    @usableFromInline var state: State = .accept
    /// Bytes validated since the last `reset()`.
    public private(set) var byteCount = 0
    /// Where the first invalid byte was, counted from the last `reset()`.
    public private(set) var invalidByteOffset: Int?

    public init() {}

    /// True when the bytes so far end on a character boundary and nothing was invalid.
    public var isComplete: Bool { state == .accept }

    public mutating func reset() {
        state = .accept
        byteCount = 0
        invalidByteOffset = nil
    }

    /// Validates the next chunk.
    /// - Returns: false as soon as a byte is invalid (a truncated final character is not
    ///   invalid yet: check `isComplete` at the end of the message).
    public mutating func validate(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard state != .reject else { return false }
        guard let base = bytes.baseAddress else { return true }
        let count = bytes.count
        var index = 0
        while index < count {
            if state == .accept {
                // ASCII fast path: eight bytes at a time while none has its high bit set.
                while index + 8 <= count,
                    base.loadUnaligned(fromByteOffset: index, as: UInt64.self) & 0x8080_8080_8080_8080 == 0
                {
                    index += 8
                }
                if index == count { break }
            }
            let byte = base.load(fromByteOffset: index, as: UInt8.self)
            state = Self.next(state, byte)
            if state == .reject {
                invalidByteOffset = byteCount + index
                byteCount += index + 1
                return false
            }
            index += 1
        }
        byteCount += count
        return true
    }

    @inline(__always) @usableFromInline
    static func next(_ state: State, _ byte: UInt8) -> State {
        let isContinuation = byte & 0xC0 == 0x80
        switch state {
        case .accept:
            switch byte {
            case 0x00...0x7F: return .accept
            case 0xC2...0xDF: return .continuation1
            case 0xE0: return .afterE0
            case 0xE1...0xEC, 0xEE...0xEF: return .continuation2
            case 0xED: return .afterED
            case 0xF0: return .afterF0
            case 0xF1...0xF3: return .continuation3
            case 0xF4: return .afterF4
            default: return .reject  // 80...C1 and F5...FF never start a character
            }
        case .continuation1: return isContinuation ? .accept : .reject
        case .continuation2: return isContinuation ? .continuation1 : .reject
        case .continuation3: return isContinuation ? .continuation2 : .reject
        case .afterE0: return (0xA0...0xBF).contains(byte) ? .continuation1 : .reject
        case .afterED: return (0x80...0x9F).contains(byte) ? .continuation1 : .reject
        case .afterF0: return (0x90...0xBF).contains(byte) ? .continuation2 : .reject
        case .afterF4: return (0x80...0x8F).contains(byte) ? .continuation2 : .reject
        case .reject: return .reject
        }
    }
}
