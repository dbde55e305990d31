import TestSupport
import Testing

@testable import WSProtocol

/// The streaming validator against Swift's own UTF-8 decoding on seeded random input.
@Suite struct UTF8ValidatorTests {
    /// The naive reference: does the standard library decode it without repairs?
    static func isValidReference(_ bytes: [UInt8]) -> Bool {
        String(validating: bytes, as: UTF8.self) != nil
    }

    static func validate(_ bytes: [UInt8], chunk: Int) -> Bool {
        var validator = UTF8Validator()
        var start = 0
        while start < bytes.count {
            let end = min(bytes.count, start + chunk)
            let ok = bytes[start..<end].withUnsafeBytes { validator.validate($0) }
            if !ok { return false }
            start = end
        }
        return validator.isComplete
    }

    @Test("agrees with the standard library on 20,000 seeded random byte strings, in any chunking")
    func randomAgreement() {
        var rng = SeededGenerator(state: 6455)
        let pieces: [[UInt8]] = [
            [0x41], [0xC3, 0xA9], [0xE2, 0x82, 0xAC], [0xF0, 0x9F, 0x98, 0x80], [0xED, 0xA0, 0x80],
            [0xC0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0x80], [0xFF], [0xE0, 0x80], [0x7F],
        ]
        for _ in 0..<20_000 {
            var bytes: [UInt8] = []
            for _ in 0..<Int.random(in: 0...12, using: &rng) {
                if Bool.random(using: &rng) {
                    bytes += pieces.randomElement(using: &rng)!
                } else {
                    bytes.append(UInt8.random(in: 0...255, using: &rng))
                }
            }
            let expected = Self.isValidReference(bytes)
            for chunk in [1, 3, 8, 64] {
                #expect(Self.validate(bytes, chunk: chunk) == expected, "\(bytes) in chunks of \(chunk)")
            }
        }
    }

    @Test("long ASCII runs take the fast path and stay valid; one bad byte in them is found at its offset")
    func asciiFastPath() {
        var bytes = [UInt8](repeating: 0x61, count: 1000)
        #expect(Self.validate(bytes, chunk: 1000))
        bytes[777] = 0xFF
        var validator = UTF8Validator()
        #expect(!bytes.withUnsafeBytes { validator.validate($0) })
        #expect(validator.invalidByteOffset == 777)
    }

    @Test("fails at the first impossible byte, before the message ends")
    func failsFast() {
        var validator = UTF8Validator()
        // "κόσμε" then U+D800 (a surrogate, ED A0 80): invalid at the A0.
        let bytes: [UInt8] = [0xCE, 0xBA, 0xE1, 0xBD, 0xB9, 0xCF, 0x83, 0xCE, 0xBC, 0xCE, 0xB5, 0xED]
        #expect(bytes.withUnsafeBytes { validator.validate($0) })
        #expect(!validator.isComplete)
        #expect(![UInt8]([0xA0]).withUnsafeBytes { validator.validate($0) })
        #expect(validator.invalidByteOffset == 12)
    }
}
