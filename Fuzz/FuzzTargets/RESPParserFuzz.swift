import PushHub

/// The RESP2 reply parser (the Redis link's) on any byte stream, as replies arrive on a
/// connection.
///
/// Input: a settings byte (bit 0: small limits — 256-byte replies, depth 3, 32-byte lines — so
/// each limit is reachable in short inputs), a chunk-plan seed byte, then the stream.
///
/// Properties:
/// - the replies and the error are the same whether the stream arrives in one read or in the
///   chunks of the plan;
/// - every reply, encoded again, parses to the same reply and takes no more bytes than it did;
/// - under the small limits no reply's encoding is longer than the reply limit.
enum RESPParserFuzz {
    struct Outcome: Equatable {
        var replies: [RESPValue] = []
        var failure: RESPParser.RESPError?
    }

    static func run(_ data: UnsafeRawBufferPointer) throws(PropertyViolation) {
        var input = FuzzInput(data)
        let limits =
            input.byte() & 1 == 0
            ? RESPParser.Limits() : RESPParser.Limits(maxReplyBytes: 256, maxDepth: 3, maxLineBytes: 32)
        let plan = ChunkPlan(seed: input.byte())
        let stream = input.rest()

        let whole = parse(stream, chunks: stream.isEmpty ? [] : [0..<stream.count], limits: limits)
        let chunked = parse(stream, chunks: plan.chunks(of: stream.count), limits: limits)
        try check(whole == chunked, "one read gave \(whole), chunks gave \(chunked)")

        for reply in whole.replies {
            let encoded = reply.encoded
            try check(encoded.count <= limits.maxReplyBytes, "a \(encoded.count)-byte reply passed the limit")
            let again = parse(encoded, chunks: [0..<encoded.count], limits: limits)
            try check(again == Outcome(replies: [reply]), "\(reply) encoded again parsed as \(again)")
        }
    }

    static func parse(_ stream: [UInt8], chunks: [Range<Int>], limits: RESPParser.Limits) -> Outcome {
        var parser = RESPParser(limits: limits)
        var outcome = Outcome()
        for chunk in chunks {
            parser.append(stream[chunk])
            do {
                while let reply = try parser.next() { outcome.replies.append(reply) }
            } catch {
                outcome.failure = error
                return outcome
            }
        }
        return outcome
    }
}
