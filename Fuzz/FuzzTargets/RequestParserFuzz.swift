import PushHub

/// The HTTP/1.1 request-head parser on any byte stream, as pipelined requests arrive on a
/// connection: after each head, the bytes that followed it are fed again.
///
/// Input: a settings byte (bit 0: a 64-byte head limit instead of 8 KiB, so 431 is reachable
/// in short inputs), a chunk-plan seed byte, then the stream.
///
/// Properties:
/// - the heads and the error are the same whether the stream arrives in one read or in the
///   chunks of the plan;
/// - `leftover` never claims more bytes than the read had, and each head consumes at least one;
/// - a parsed head's target starts with `/`, and the head written back out parses to the same
///   head (so its method and header names are tokens);
/// - what a strict parser refuses never comes out as a head (issue #24): its version is
///   `HTTP/1.1` or `HTTP/1.0`, no header value holds a control character but HTAB, there is at
///   most one Host and one Content-Length, and never Transfer-Encoding with Content-Length;
/// - its path, query and keep-alive answers do not trap.
enum RequestParserFuzz {
    struct Outcome: Equatable {
        var heads: [RequestHead] = []
        var failure: HTTPError?
    }

    static func run(_ data: UnsafeRawBufferPointer) throws(PropertyViolation) {
        var input = FuzzInput(data)
        let maxHeadBytes = input.byte() & 1 == 0 ? RequestParser.defaultMaxHeadBytes : 64
        let plan = ChunkPlan(seed: input.byte())
        let stream = input.rest()

        let whole = try parse(stream, chunks: stream.isEmpty ? [] : [0..<stream.count], maxHeadBytes: maxHeadBytes)
        let chunked = try parse(stream, chunks: plan.chunks(of: stream.count), maxHeadBytes: maxHeadBytes)
        try check(whole == chunked, "one read gave \(whole), chunks gave \(chunked)")

        for head in whole.heads {
            try check(head.target.hasPrefix("/"), "target \(head.target) does not start with /")
            try checkStrict(head)
            _ = (head.path, head.query, head.isKeepAlive)
            let text = written(head)
            let reparsed = try parse(text, chunks: [0..<text.count], maxHeadBytes: text.count + 1)
            try check(reparsed == Outcome(heads: [head]), "\(head) written out parsed as \(reparsed)")
        }
    }

    /// The properties of a head that only a lenient parser lets through, stated apart from the
    /// parser's own checks.
    static func checkStrict(_ head: RequestHead) throws(PropertyViolation) {
        try check(head.version == "HTTP/1.1" || head.version == "HTTP/1.0", "version \(head.version)")
        for field in head.headers {
            let isFieldByte = { (byte: UInt8) in byte == 0x09 || (0x20...0x7E).contains(byte) || byte >= 0x80 }
            try check(field.value.utf8.allSatisfy(isFieldByte), "control character in \(field)")
        }
        try check(head.headers.count(of: "Host") <= 1, "two Host headers: \(head.headers)")
        let lengths = head.headers.count(of: "Content-Length")
        try check(lengths <= 1, "two Content-Lengths: \(head.headers)")
        try check(lengths == 0 || head.headers["Transfer-Encoding"] == nil, "Transfer-Encoding with Content-Length")
    }

    static func parse(_ stream: [UInt8], chunks: [Range<Int>], maxHeadBytes: Int) throws(PropertyViolation)
        -> Outcome
    {
        var parser = RequestParser(maxHeadBytes: maxHeadBytes)
        var outcome = Outcome()
        for chunk in chunks {
            var read = stream[chunk]
            while !read.isEmpty {
                let step: RequestParser.Step
                do {
                    step = try read.withUnsafeBytes { bytes in
                        Result { () throws(HTTPError) in try parser.feed(bytes) }
                    }.get()
                } catch {
                    outcome.failure = error
                    return outcome
                }
                guard case .head(let head, let leftover) = step else { break }
                try check(leftover >= 0 && leftover < read.count, "leftover \(leftover) of a \(read.count)-byte read")
                outcome.heads.append(head)
                read = read.suffix(leftover)
            }
        }
        return outcome
    }

    /// `head` as request-head bytes: the request line, each header, the blank line.
    static func written(_ head: RequestHead) -> [UInt8] {
        var text = "\(head.method) \(head.target) \(head.version)\r\n"
        for field in head.headers { text += "\(field.name): \(field.value)\r\n" }
        return Array((text + "\r\n").utf8)
    }
}
