/// Where to cut a byte stream into the reads a socket might return, from one seed byte:
/// seed 0 is one read of everything; otherwise pseudo-random lengths from 1 up to a bound the
/// seed picks (1, 2, 3, 5, 8, 13, 64 or 512 bytes), so that a parser is fed at every kind of
/// boundary — inside a header, a length field, a masking key, a UTF-8 sequence, a CRLF.
struct ChunkPlan {
    let seed: UInt8

    /// Consecutive, non-empty ranges covering `0..<count` exactly.
    func chunks(of count: Int) -> [Range<Int>] {
        guard seed != 0 else { return count == 0 ? [] : [0..<count] }
        let bounds = [1, 2, 3, 5, 8, 13, 64, 512]
        let bound = bounds[Int(seed & 7)]
        var state = UInt32(seed)  // a linear congruential generator: cheap and deterministic
        var ranges: [Range<Int>] = []
        var start = 0
        while start < count {
            state = state &* 1_664_525 &+ 1_013_904_223
            let length = 1 + Int(state >> 16) % bound
            let end = min(count, start + length)
            ranges.append(start..<end)
            start = end
        }
        return ranges
    }
}
