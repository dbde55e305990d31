import HTTP1

/// The HTTP/1.1 response parser (`HTTP1ResponseParser`) fed any bytes as a server's answer,
/// then, if it asks for more, the end of the stream.
///
/// Input: a settings byte (bit 0: the request was a HEAD; bit 1: a 64-byte body bound instead
/// of 1 MiB, so `bodyTooLarge` is reachable in short inputs; bit 2: a 256-byte head bound and
/// 4 fields, likewise), a chunk-plan seed byte, then the server's bytes.
///
/// Properties:
/// - it never traps, whatever the server sends, however the reads cut it;
/// - the outcome (the response, its keep-alive answer and leftover, or the error) is the same
///   whether the bytes arrive in one read or in the chunks of the plan;
/// - `leftover` never claims more bytes than the last read had;
/// - the body is within its bound, empty for a HEAD, a 204 or a 304;
/// - what a strict parser refuses never comes out: the status is 200–599, field names are
///   tokens and values hold no control character but HTAB, there are at most `maxFields`, at
///   most one Content-Length and never one with Transfer-Encoding;
/// - the response written back out with a Content-Length parses to the same response.
enum HTTP1ResponseFuzz {
    struct Outcome: Equatable {
        var status = 0
        var headers: [String] = []
        var body: [UInt8] = []
        var isKeepAlive = false
        /// Bytes after the response, to the end of the stream.
        var leftover = 0
        var failure: HTTP1ResponseError?
    }

    struct Limits {
        var isHead: Bool
        var maxBodyBytes: Int
        var maxHeadBytes: Int
        var maxFields: Int
    }

    static func run(_ data: UnsafeRawBufferPointer) throws(PropertyViolation) {
        var input = FuzzInput(data)
        let flags = input.byte()
        let limits = Limits(
            isHead: flags & 1 != 0, maxBodyBytes: flags & 2 != 0 ? 64 : 1 << 20,
            maxHeadBytes: flags & 4 != 0 ? 256 : HTTP1ResponseParser.defaultMaxHeadBytes,
            maxFields: flags & 4 != 0 ? 4 : HTTP1ResponseParser.defaultMaxFields)
        let plan = ChunkPlan(seed: input.byte())
        let stream = input.rest()

        let whole = try parse(stream, chunks: stream.isEmpty ? [] : [0..<stream.count], limits)
        let chunked = try parse(stream, chunks: plan.chunks(of: stream.count), limits)
        try check(whole == chunked, "one read gave \(whole), chunks gave \(chunked)")
        guard whole.failure == nil else { return }
        try checkStrict(whole, limits)

        // Written back with a Content-Length (no other framing field), it reads the same.
        var text = "HTTP/1.1 \(whole.status) OK\r\n"
        for field in whole.headers
        where !field.lowercased().hasPrefix("content-length:") && !field.lowercased().hasPrefix("transfer-encoding:")
            && !field.lowercased().hasPrefix("connection:")
        {
            text += field + "\r\n"
        }
        text += "Content-Length: \(whole.body.count)\r\n\r\n"
        let rewritten = Array(text.utf8) + whole.body
        var roomy = limits
        roomy.isHead = false
        roomy.maxHeadBytes = rewritten.count + 1
        roomy.maxFields = whole.headers.count + 1
        let reparsed = try parse(rewritten, chunks: [0..<rewritten.count], roomy)
        try check(
            reparsed.failure == nil && reparsed.status == whole.status && reparsed.body == whole.body,
            "\(whole) written out as \(String(decoding: rewritten, as: UTF8.self).debugDescription) read as \(reparsed)"
        )
    }

    static func checkStrict(_ outcome: Outcome, _ limits: Limits) throws(PropertyViolation) {
        try check((200...599).contains(outcome.status), "status \(outcome.status)")
        try check(outcome.body.count <= limits.maxBodyBytes, "a body of \(outcome.body.count) bytes")
        if limits.isHead || outcome.status == 204 || outcome.status == 304 {
            try check(outcome.body.isEmpty, "a body on a HEAD, 204 or 304: \(outcome)")
        }
        try check(outcome.headers.count <= limits.maxFields, "\(outcome.headers.count) fields")
        var lengths = 0
        var codings = 0
        for field in outcome.headers {
            let name = field.prefix { $0 != ":" }
            let isTokenByte = { (byte: UInt8) in
                (0x21...0x7E).contains(byte) && !"\"(),/:;<=>?@[\\]{}".utf8.contains(byte)
            }
            try check(!name.isEmpty && name.utf8.allSatisfy(isTokenByte), "the field name in \(field.debugDescription)")
            let isFieldByte = { (byte: UInt8) in byte == 0x09 || (0x20...0x7E).contains(byte) || byte >= 0x80 }
            try check(field.utf8.allSatisfy(isFieldByte), "a control character in \(field.debugDescription)")
            if name.lowercased() == "content-length" { lengths += 1 }
            if name.lowercased() == "transfer-encoding" { codings += 1 }
        }
        try check(lengths <= 1, "\(lengths) Content-Lengths")
        try check(lengths == 0 || codings == 0, "Content-Length with Transfer-Encoding")
    }

    static func parse(_ stream: [UInt8], chunks: [Range<Int>], _ limits: Limits) throws(PropertyViolation) -> Outcome {
        var parser = HTTP1ResponseParser(
            requestMethod: limits.isHead ? "HEAD" : "GET", maxBodyBytes: limits.maxBodyBytes,
            maxHeadBytes: limits.maxHeadBytes, maxFields: limits.maxFields)
        var outcome = Outcome()
        func take(_ response: HTTP1Response) {
            outcome.status = response.status
            outcome.headers = response.headers.map { "\($0.name): \($0.value)" }
            outcome.body = response.body
        }
        var lastRead = 0
        var lastLeftover = 0
        do throws(HTTP1ResponseError) {
            for chunk in chunks {
                lastRead = chunk.count
                guard case .response(let response, let isKeepAlive, let leftover) = try parser.feed(stream[chunk])
                else {
                    continue
                }
                take(response)
                outcome.isKeepAlive = isKeepAlive
                // Counted to the end of the stream, it is the same however the reads went.
                outcome.leftover = leftover + stream.count - chunk.upperBound
                lastLeftover = leftover
                break
            }
            if outcome.status == 0 { take(try parser.endOfStream()) }
        } catch {
            outcome.failure = error
        }
        try check(lastLeftover >= 0 && lastLeftover <= lastRead, "leftover \(lastLeftover) of a \(lastRead)-byte read")
        return outcome
    }
}
