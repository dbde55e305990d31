/// SplitMix64, so random tests reproduce. The same generator as TestSupport's `SeededGenerator`,
/// which this test target cannot import (Package.swift gives HTTP2Tests only HTTP2).
/// TODO(#30): use TestSupport's once HTTP2Tests depends on it.
struct SeededRandom: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
