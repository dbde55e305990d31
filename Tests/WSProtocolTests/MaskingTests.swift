import TestSupport
import Testing

@testable import WSProtocol

/// The word-at-a-time masking against a byte-at-a-time reference.
@Suite struct MaskingTests {
    static func naive(_ bytes: [UInt8], key: [UInt8], phase: Int) -> [UInt8] {
        bytes.enumerated().map { $0.element ^ key[($0.offset + phase) % 4] }
    }

    @Test("agrees with the naive XOR for every length 0...300 and every phase, resuming across chunks")
    func agreesWithNaive() {
        var rng = SeededGenerator(state: 42)
        for length in 0...300 {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &rng) }
            let keyBytes = (0..<4).map { _ in UInt8.random(in: 0...255, using: &rng) }
            let key = MaskingKey(keyBytes[0], keyBytes[1], keyBytes[2], keyBytes[3])
            for phase in 0..<4 {
                var fast = bytes
                let split = length / 3
                var next = fast.withUnsafeMutableBytes {
                    key.apply(to: UnsafeMutableRawBufferPointer(rebasing: $0[..<split]), phase: phase)
                }
                next = fast.withUnsafeMutableBytes {
                    key.apply(to: UnsafeMutableRawBufferPointer(rebasing: $0[split...]), phase: next)
                }
                #expect(fast == Self.naive(bytes, key: keyBytes, phase: phase))
                #expect(next == (phase + length) % 4)
            }
        }
    }

    @Test("random keys differ")
    func randomKeys() {
        let keys = (0..<16).map { _ in MaskingKey.random() }
        #expect(Set(keys.map { "\($0.bytes)" }).count > 1)
    }
}
