/// The byte-stream machinery every `LoopConnection` shares, written once: reading into the loop's
/// buffer (TLS's first-byte check included), writing the queue with watermarks (DESIGN §9),
/// closing, timers, and the two things both listeners do in HTTP: read a request head, and answer
/// before closing.
extension LoopConnection {
    // MARK: - Input

    /// The socket is readable: read into the loop's buffer and hand the bytes to the protocol, a
    /// bounded number of times.
    func readable() {
        for _ in 0..<4 where !stream.isCloseRequested && !stream.isReadPaused {
            let buffer = loop.readBuffer
            let count: Int
            do {
                switch try receive(into: buffer) {
                case .wouldBlock: return
                case .processed(let n): count = n
                }
            } catch {
                Log.debug("read failed", [("error", "\(error)")])
                if stream.tls != nil { loop.metrics.tlsFailures.add(1, ordering: .relaxed) }
                requestClose()
                return
            }
            if count == 0 {
                requestClose()  // end of stream: a peer that leaves without a close frame is simply gone
                return
            }
            stream.lastReadAt = loop.now
            // While closing, what the peer still sends is discarded.
            if !stream.isClosing { received(UnsafeMutableRawBufferPointer(rebasing: buffer[0..<count])) }
            if count < buffer.count && stream.tls?.hasBufferedInput != true { return }
        }
    }

    /// Reads from the socket, or through TLS.
    private func receive(into buffer: UnsafeMutableRawBufferPointer) throws(SystemError) -> IOResult<Int> {
        guard let tls = stream.tls else { return try stream.socket.read(into: buffer) }
        if !tls.sawHandshakeRecord {
            switch try stream.socket.peekByte() {
            case .wouldBlock: return .wouldBlock
            case .processed(nil): return .processed(0)
            case .processed(let byte?):
                if TLSStream.startsPlainHTTP(byte) {
                    refusePlainHTTP()
                    return .wouldBlock
                }
                tls.sawHandshakeRecord = true
            }
        }
        let handshaking = !tls.isHandshakeDone
        let result = try tls.read(into: buffer)
        if handshaking && tls.isHandshakeDone {
            loop.metrics.tlsHandshakes.add(1, ordering: .relaxed)
            if tls.isResumed { loop.metrics.tlsResumed.add(1, ordering: .relaxed) }
        }
        if tls.readWaitsForWritable { loop.updateInterest(self, writable: true) }
        if tls.writeWaitsForReadable { loop.flushSoon(self) }
        return result
    }

    /// Plain HTTP on a TLS port (`http://` or `ws://` for `https://`/`wss://`): a plain 400 that
    /// says so, as nginx does, instead of a silent handshake failure.
    private func refusePlainHTTP() {
        let scheme = Self.listenerKind == .client ? "wss:// (or https://)" : "https://"
        let answer = Response.plain(400, "this port speaks TLS: use \(scheme)").serialized(keepAlive: false)
        // Best effort, both: the socket is new and empty, and the request is read and dropped so
        // that closing with it unread does not reset the connection before the answer arrives.
        _ = try? answer.withUnsafeBytes { bytes throws(SystemError) in try stream.socket.write(bytes) }
        _ = try? stream.socket.read(into: loop.readBuffer)
        loop.metrics.tlsFailures.add(1, ordering: .relaxed)
        stream.shutdownWrite(closeNotify: false)
        requestClose()
    }

    // MARK: - Output

    /// Writes what is queued. Called by the loop at the end of a tick and on EPOLLOUT.
    func flush() {
        guard !stream.isCloseRequested else { return }
        if stream.tls?.readWaitsForWritable == true { readable() }  // a TLS read waited for this
        guard !stream.isCloseRequested else { return }
        if !stream.outbound.isEmpty {
            do {
                switch try stream.writeQueued() {
                case .processed(let n): loop.bytesWritten += n
                case .wouldBlock: break
                }
            } catch {
                Log.debug("write failed", [("error", "\(error)")])
                requestClose()
                return
            }
        }
        if stream.outbound.isEmpty {
            if stream.isClosing && !stream.hasShutDownWrite { stream.shutdownWrite() }
        } else if !stream.isReadPaused && stream.outbound.pendingBytes > loop.config.outboundHardLimit {
            loop.metrics.slowConsumerCloses.add(1, ordering: .relaxed)
            requestClose()
            return
        }
        if stream.isReadPaused && stream.outbound.pendingBytes < loop.config.outboundLowWatermark { resumeReading() }
        flushed()
        loop.updateInterest(self, writable: !stream.outbound.isEmpty || stream.tls?.readWaitsForWritable == true)
    }

    /// DESIGN §9: every byte queued for a connection counts — what it is sent and what the hub
    /// answers by itself (pongs, errors): above the high watermark the hub stops reading from it,
    /// so a client that sends without reading cannot make the hub queue without bound.
    func pauseReadingIfAboveHighWatermark() {
        if stream.outbound.pendingBytes > loop.config.outboundHighWatermark { pauseReading() }
    }

    func pauseReading() {
        guard !stream.isReadPaused else { return }
        stream.isReadPaused = true
        loop.updateInterest(self, writable: true)
    }

    func resumeReading() {
        guard stream.isReadPaused else { return }
        stream.isReadPaused = false
        loop.updateInterest(self, writable: !stream.outbound.isEmpty)
    }

    // MARK: - Closing

    /// Marks the connection for reaping at the end of the tick.
    func requestClose() {
        guard !stream.isCloseRequested else { return }
        stream.isCloseRequested = true
        loop.reapSoon(self)
    }

    /// Starts closing: what is queued is written, then the stream half-closes and waits for the
    /// peer's end of stream until `closeTimeout` has passed.
    func closeAfterFlush() {
        guard !stream.isClosing else { return }
        closingStarted()
        stream.closeDeadline = loop.now + loop.config.closeTimeout.nanoseconds
        resumeReading()  // to see the peer's end of stream
        loop.flushSoon(self)
    }

    // MARK: - Timers

    /// The earliest instant something must be checked.
    var nextDeadline: UInt64? { stream.closeDeadline ?? openDeadline }

    func timerFired(now: UInt64) {
        if let deadline = stream.closeDeadline {
            if now >= deadline { requestClose() }
        } else {
            openTimerFired(now: now)
        }
    }

    // MARK: - HTTP, which both listeners start with

    /// Feeds `bytes` to a request-head parser.
    /// - Returns: the head and the bytes after it, once it is in; nil while more bytes are
    ///   needed, and after a malformed head was answered (its 4xx or 5xx, then closing).
    func readRequestHead(_ parser: inout RequestParser, _ bytes: UnsafeMutableRawBufferPointer)
        -> (head: RequestHead, rest: UnsafeMutableRawBufferPointer)?
    {
        let step: RequestParser.Step
        do {
            step = try parser.feed(UnsafeRawBufferPointer(bytes))
        } catch {
            loop.metrics.handshakesRejected.add(1, ordering: .relaxed)
            respondAndClose(.plain(error.status, error.reason))
            return nil
        }
        guard case .head(let head, let leftover) = step else { return nil }
        return (head, UnsafeMutableRawBufferPointer(rebasing: bytes[(bytes.count - leftover)...]))
    }

    /// Writes the response with `Connection: close`, then closes.
    func respondAndClose(_ response: Response) {
        stream.outbound.append(response.serialized(keepAlive: false))
        closeAfterFlush()
    }

    /// A request did not arrive within its deadline: a 408, unless there is no one to answer (the
    /// TLS handshake did not finish) or nothing to answer (`idle`: a keep-alive connection
    /// between requests).
    func requestTimedOut(idle: Bool) {
        loop.metrics.timeoutCloses.add(1, ordering: .relaxed)
        if let tls = stream.tls, !tls.isHandshakeDone {
            requestClose()
        } else if idle {
            requestClose()
        } else {
            respondAndClose(.plain(408, "the request did not arrive within \(loop.config.handshakeTimeout)"))
        }
    }
}
