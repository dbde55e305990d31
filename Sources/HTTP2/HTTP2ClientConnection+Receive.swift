/// What the server sends: frames in order, each applied to the connection's state (RFC 9113 §5, §6).
extension HTTP2ClientConnection {
    /// Octets the server sent, in any chunks. A protocol error ends the connection (`fail`).
    public mutating func received(_ bytes: some Collection<UInt8>) -> [Action] {
        switch state {
        case .idle: preconditionFailure("start() comes before received()")
        case .closed: return []
        case .awaitingSettings, .open, .goingAway: break
        }
        parser.append(bytes)
        do throws(HTTP2ProtocolError) {
            while state != .closed, let frame = try parser.next() { try handle(frame) }
            startQueued()
        } catch {
            fail(with: error)
        }
        return takeActions()
    }

    private mutating func handle(_ frame: HTTP2Frame) throws(HTTP2ProtocolError) {
        let id = frame.streamID
        if let block = openFieldBlock {
            guard case .continuation = frame.payload, id == block.streamID else {
                throw .continuationExpected(streamID: block.streamID, type: frame.typeCode)
            }
        }
        if state == .awaitingSettings {
            guard case .settings(_, ack: false) = frame.payload else { throw .prefaceNotSettings(type: frame.typeCode) }
        }
        switch frame.payload {
        case .data(let body, let endStream, let padding):
            try receivedData(body, endStream: endStream, flowControlled: body.count + padding, on: id)
        case .headers(let fragment, let endStream, let endHeaders, _, _):
            if endHeaders {
                try receivedFieldBlock(fragment, endStream: endStream, on: id)
            } else {
                try checkFieldBlockLength(fragment.count)
                openFieldBlock = (id, endStream, fragment)
            }
        case .continuation(let fragment, let endHeaders):
            guard var block = openFieldBlock else { throw .unexpectedContinuation(streamID: id) }
            try checkFieldBlockLength(block.octets.count + fragment.count)
            block.octets.append(contentsOf: fragment)
            openFieldBlock = endHeaders ? nil : block
            if endHeaders { try receivedFieldBlock(block.octets, endStream: block.endStream, on: id) }
        case .pushPromise:
            throw .pushPromiseReceived(streamID: id)
        case .priority, .unknown:
            return
        case .rstStream(let code):
            guard let stream = try openStream(id, .rstStream) else { return }
            close(id)
            actions.append(.failed(stream.requestID, code == .refusedStream ? .refused : .reset(code)))
        case .settings(let values, let ack):
            guard !ack else { return }
            try receivedSettings(values)
        case .ping(let opaque, let ack):
            if !ack {
                try writeAcknowledgement(HTTP2Frame(streamID: 0, .ping(opaque: opaque, ack: true)))
            } else if opaque == pingAwaited {
                pingAwaited = nil
                actions.append(.pingAcked)
            }
        case .goAway(let lastStreamID, let code, let debugData):
            receivedGoAway(lastStreamID: lastStreamID, code: code, debugData: debugData)
        case .windowUpdate(let increment):
            try receivedWindowUpdate(Int(increment), on: id)
        }
    }

    /// The stream `id` if open; nil if it is closed and the frame is to be ignored (§5.1): any
    /// frame on a stream we reset (the server may have sent it before our RST_STREAM arrived),
    /// and WINDOW_UPDATE, RST_STREAM and PRIORITY on one the server closed (they may cross our
    /// END_STREAM or RST_STREAM).
    /// - Throws: `.frameOnIdleStream` for a stream never opened (or a server-initiated one);
    ///   `.frameOnClosedStream` for DATA or HEADERS on a stream the server closed, by END_STREAM
    ///   or RST_STREAM: nothing on it can be under way any more.
    private func openStream(_ id: UInt32, _ type: HTTP2FrameType) throws(HTTP2ProtocolError) -> HTTP2ClientStream? {
        if let stream = streams[id] { return stream }
        guard id % 2 == 1, id < nextStreamID else { throw .frameOnIdleStream(type, streamID: id) }
        switch type {
        case .data, .headers:
            guard wasReset(id) else { throw .frameOnClosedStream(type, streamID: id) }
        default:
            break
        }
        return nil
    }

    private mutating func close(_ id: UInt32) {
        if let stream = streams.removeValue(forKey: id) { streamOfRequest[stream.requestID] = nil }
    }

    private func checkFieldBlockLength(_ length: Int) throws(HTTP2ProtocolError) {
        // HPACK makes a field at most a few octets longer than its name and value, and the list
        // size counts 32 more per field: a block longer than twice the list limit cannot fit it.
        let limit = 2 * settings.maxHeaderListSize
        guard length <= limit else { throw .fieldBlockTooLarge(length: length, limit: limit) }
    }

    private mutating func receivedData(
        _ body: [UInt8], endStream: Bool, flowControlled length: Int, on id: UInt32
    ) throws(HTTP2ProtocolError) {
        guard length <= receiveWindow else {
            throw .flowControlOverrun(streamID: 0, length: length, window: receiveWindow)
        }
        receiveWindow -= length
        connectionUnacknowledged += length
        if connectionUnacknowledged >= settings.connectionWindowSize / 2 {
            let increment = connectionUnacknowledged
            HTTP2FrameWriter.write(HTTP2Frame(streamID: 0, .windowUpdate(increment: UInt32(increment))), into: &output)
            receiveWindow += increment
            connectionUnacknowledged = 0
        }
        guard var stream = try openStream(id, .data) else { return }
        guard length <= stream.receiveWindow else {
            throw .flowControlOverrun(streamID: id, length: length, window: stream.receiveWindow)
        }
        close(id)  // taken out to change it in place; put back below while it stays open
        guard stream.status != nil else {
            return resetStream(
                id, stream.requestID, .protocolError, .malformedResponse("DATA before the response's HEADERS"))
        }
        guard stream.responseBody.count + body.count <= settings.maxResponseBody else {
            return resetStream(id, stream.requestID, .cancel, .responseTooLarge(limit: settings.maxResponseBody))
        }
        stream.receiveWindow -= length
        stream.responseBody.append(contentsOf: body)
        if endStream { return finish(stream, id) }
        stream.unacknowledged += length
        if stream.unacknowledged >= settings.initialWindowSize / 2 {
            HTTP2FrameWriter.write(
                HTTP2Frame(streamID: id, .windowUpdate(increment: UInt32(stream.unacknowledged))), into: &output)
            stream.receiveWindow += stream.unacknowledged
            stream.unacknowledged = 0
        }
        reopen(stream, id)
    }

    private mutating func receivedFieldBlock(
        _ block: [UInt8], endStream: Bool, on id: UInt32
    ) throws(HTTP2ProtocolError) {
        // Decoded whatever the stream's state: HPACK's table is the connection's (§4.3).
        let fields: [HeaderField]
        do { fields = try decoder.decode(block) } catch { throw .fieldBlockUndecodable(error) }
        guard var stream = try openStream(id, .headers) else { return }
        close(id)
        if let problem = stream.receivedFieldSection(fields, endStream: endStream) {
            return resetStream(id, stream.requestID, .protocolError, .malformedResponse(problem))
        }
        if endStream { return finish(stream, id) }
        reopen(stream, id)
    }

    /// Puts back a stream `close` took out to change.
    private mutating func reopen(_ stream: HTTP2ClientStream, _ id: UInt32) {
        streams[id] = stream
        streamOfRequest[stream.requestID] = id
    }

    /// The server ended the stream: the response, or why it is malformed. A request body not
    /// all sent is abandoned with RST_STREAM NO_ERROR (§8.1).
    private mutating func finish(_ stream: HTTP2ClientStream, _ id: UInt32) {
        if let problem = stream.endProblem() {
            return resetStream(id, stream.requestID, .protocolError, .malformedResponse(problem))
        }
        if !stream.isRequestDone { writeReset(id, .noError) }
        let response = HTTP2Response(status: stream.status ?? 0, headers: stream.headers, body: stream.responseBody)
        actions.append(.response(stream.requestID, response))
    }

    /// A stream error of ours (§5.4.2): RST_STREAM with `code`, the request failed.
    private mutating func resetStream(
        _ id: UInt32, _ request: RequestID, _ code: HTTP2ErrorCode, _ error: HTTP2StreamError
    ) {
        close(id)
        writeReset(id, code)
        actions.append(.failed(request, error))
    }

    private mutating func receivedSettings(_ values: [HTTP2Setting]) throws(HTTP2ProtocolError) {
        for setting in values {
            if setting.identifier == .enablePush, setting.value == 1 { throw .serverEnabledPush }
            let oldWindow = peerSettings.initialWindowSize
            try peerSettings.apply(setting)
            switch setting.identifier {
            case .initialWindowSize:
                // §6.9.2: the change applies to every open stream's window, which may go negative.
                let delta = peerSettings.initialWindowSize - oldWindow
                for streamID in streams.keys {
                    streams[streamID]!.sendWindow += delta
                    guard streams[streamID]!.sendWindow <= HTTP2Settings.maxWindowSize else {
                        throw .windowOverflow(streamID: streamID)
                    }
                }
            case .headerTableSize:
                encoder.setPeerMaxTableSize(peerSettings.headerTableSize)
            default:
                break
            }
        }
        try writeAcknowledgement(HTTP2Frame(streamID: 0, .settings([], ack: true)))
        if state == .awaitingSettings { state = .open }
    }

    private mutating func receivedGoAway(lastStreamID: UInt32, code: HTTP2ErrorCode, debugData: [UInt8]) {
        for id in streams.keys.sorted() where id > lastStreamID {
            let stream = streams[id]!
            close(id)
            actions.append(.failed(stream.requestID, .goneAway(lastStreamID: lastStreamID, code)))
        }
        for (id, _) in queue[queueHead...] {
            actions.append(.failed(id, .notSent("the server is going away (GOAWAY \(code))")))
        }
        queue.removeAll()
        queueHead = 0
        if case .goingAway(let earlier) = state {
            state = .goingAway(lastStreamID: min(earlier, lastStreamID))
        } else {
            state = .goingAway(lastStreamID: lastStreamID)
        }
        let debug = String(decoding: debugData.prefix(256), as: UTF8.self)
        actions.append(.goAway(lastStreamID: lastStreamID, error: code, debug: debug))
    }

    private mutating func receivedWindowUpdate(_ increment: Int, on id: UInt32) throws(HTTP2ProtocolError) {
        guard id != 0 else {
            guard increment > 0 else { throw .zeroWindowIncrement }
            sendWindow += increment
            guard sendWindow <= HTTP2Settings.maxWindowSize else { throw .windowOverflow(streamID: 0) }
            return
        }
        guard let stream = try openStream(id, .windowUpdate) else { return }
        guard increment > 0 else {
            return resetStream(id, stream.requestID, .protocolError, .malformedResponse("WINDOW_UPDATE of 0"))
        }
        guard stream.sendWindow + increment <= HTTP2Settings.maxWindowSize else {
            return resetStream(id, stream.requestID, .flowControlError, .windowOverflow)
        }
        streams[id]!.sendWindow += increment
    }
}
