import Testing

@testable import HTTP2

/// The client connection against scripted server octets (RFC 9113): the preface and SETTINGS,
/// streams and their limit, both directions of flow control, field blocks across CONTINUATION,
/// GOAWAY, RST_STREAM, PING, and each way a server can break the protocol.
@Suite struct HTTP2ClientConnectionTests {
    typealias Action = HTTP2ClientConnection.Action

    @Test("start writes the preface, SETTINGS with push disabled, and raises the connection window")
    func preface() {
        var settings = HTTP2ClientConnection.Settings()
        settings.initialWindowSize = 1 << 20
        settings.connectionWindowSize = 8 << 20
        var server = ScriptedServer(settings: settings)
        let frames = server.takeWritten()
        #expect(frames.count == 2)
        guard case .settings(let values, ack: false) = frames.first?.payload else {
            Issue.record("expected SETTINGS, got \(frames)")
            return
        }
        #expect(values.contains(HTTP2Setting(.enablePush, 0)))
        #expect(values.contains(HTTP2Setting(.initialWindowSize, 1 << 20)))
        #expect(frames.last == HTTP2Frame(streamID: 0, .windowUpdate(increment: UInt32(8 << 20) - 65_535)))
        #expect(server.connection.state == .awaitingSettings)
    }

    @Test("no stream starts before the server's SETTINGS; then the request goes out and SETTINGS is acknowledged")
    func waitsForServerSettings() {
        var server = ScriptedServer()
        _ = server.takeWritten()
        server.sendRequest(1)
        #expect(server.takeWritten().isEmpty)
        #expect(server.connection.queuedRequests == 1)
        server.send(HTTP2Frame(streamID: 0, .settings([], ack: false)))
        let frames = server.written
        #expect(frames.first == HTTP2Frame(streamID: 0, .settings([], ack: true)))
        let heads = server.takeRequestHeads()
        #expect(heads.count == 1 && heads[0].0 == 1)
        #expect(
            heads[0].1 == [
                HeaderField(":method", "POST"), HeaderField(":scheme", "https"),
                HeaderField(":authority", "api.push.example"), HeaderField(":path", "/3/device/abc"),
                HeaderField("apns-topic", "t"),
            ])
        #expect(server.connection.state == .open)
    }

    @Test("a server that begins with anything but SETTINGS breaks the preface (PROTOCOL_ERROR)")
    func prefaceNotSettings() {
        var server = ScriptedServer()
        server.send(HTTP2Frame(streamID: 0, .ping(opaque: 1, ack: false)))
        #expect(server.takeEvents() == [.connectionError(.prefaceNotSettings(type: 6))])
        #expect(server.connection.state == .closed)
    }

    @Test("a response: HEADERS then DATA with END_STREAM; the stream closes")
    func response() {
        var server = ScriptedServer.open()
        server.sendRequest(1)
        let head = server.headers(1, status: 200, [HeaderField("apns-id", "x")])
        server.send(head, HTTP2Frame(streamID: 1, .data(Array("{}".utf8), endStream: true)))
        #expect(
            server.takeEvents() == [
                .response(
                    RequestID(1),
                    HTTP2Response(status: 200, headers: [HeaderField("apns-id", "x")], body: Array("{}".utf8)))
            ])
        #expect(server.connection.openStreams == 0)
    }

    @Test("an informational 1xx head is skipped, trailers are appended")
    func informationalAndTrailers() {
        var server = ScriptedServer.open()
        server.sendRequest(1)
        let early = server.headers(1, status: 103, [HeaderField("link", "x")])
        let head = server.headers(1, status: 200)
        let trailers = HTTP2Frame(
            streamID: 1,
            .headers(fragment: server.block([HeaderField("grpc-status", "0")]), endStream: true, endHeaders: true))
        server.send(early, head, HTTP2Frame(streamID: 1, .data([1], endStream: false)), trailers)
        #expect(
            server.takeEvents() == [
                .response(
                    RequestID(1), HTTP2Response(status: 200, headers: [HeaderField("grpc-status", "0")], body: [1]))
            ])
    }

    @Test("no more streams than the server's SETTINGS_MAX_CONCURRENT_STREAMS; the rest start as streams close")
    func concurrencyLimit() {
        var server = ScriptedServer.open([HTTP2Setting(.maxConcurrentStreams, 2)])
        for id in 1...5 { server.sendRequest(UInt64(id)) }
        #expect(server.takeRequestHeads().map(\.0) == [1, 3])
        #expect(server.connection.openStreams == 2 && server.connection.queuedRequests == 3)
        let head = server.headers(3, status: 200, endStream: true)
        server.send(head)
        #expect(server.takeEvents() == [.response(RequestID(2), HTTP2Response(status: 200))])
        #expect(server.takeRequestHeads().map(\.0) == [5])
        // The server raises its limit: the two still waiting start.
        server.send(HTTP2Frame(streamID: 0, .settings([HTTP2Setting(.maxConcurrentStreams, 10)], ack: false)))
        #expect(server.takeRequestHeads().map(\.0) == [7, 9])
        #expect(server.connection.queuedRequests == 0)
    }

    @Test("a request body goes out within the connection and stream windows, the rest after WINDOW_UPDATE")
    func sendFlowControl() {
        var server = ScriptedServer.open()
        let body = [UInt8](repeating: 0x61, count: 100_000)
        server.sendRequest(1, ScriptedServer.request(body: body))
        var sent = ScriptedServer.dataSent(server.takeWritten())
        #expect(sent[1]?.octets == 65_535 && sent[1]?.ended == false)
        // The stream's window alone opens: the connection's is still empty.
        server.send(HTTP2Frame(streamID: 1, .windowUpdate(increment: 50_000)))
        #expect(server.takeWritten().isEmpty)
        server.send(HTTP2Frame(streamID: 0, .windowUpdate(increment: 20_000)))
        sent = ScriptedServer.dataSent(server.takeWritten())
        #expect(sent[1]?.octets == 20_000 && sent[1]?.ended == false)
        server.send(HTTP2Frame(streamID: 0, .windowUpdate(increment: 100_000)))
        sent = ScriptedServer.dataSent(server.takeWritten())
        #expect(sent[1]?.octets == 100_000 - 85_535 && sent[1]?.ended == true)
    }

    @Test("DATA frames are at most the server's SETTINGS_MAX_FRAME_SIZE")
    func dataFrameSize() {
        var server = ScriptedServer.open([HTTP2Setting(.initialWindowSize, 1 << 20)])
        server.send(HTTP2Frame(streamID: 0, .windowUpdate(increment: 1 << 20)))
        server.sendRequest(1, ScriptedServer.request(body: [UInt8](repeating: 1, count: 40_000)))
        let sizes = server.takeWritten().compactMap { frame -> Int? in
            if case .data(let body, _, _) = frame.payload { return body.count }
            return nil
        }
        #expect(sizes == [16_384, 16_384, 7232])
    }

    @Test("SETTINGS_INITIAL_WINDOW_SIZE changes apply to open streams, down (below zero) and up")
    func initialWindowChange() {
        var server = ScriptedServer.open([HTTP2Setting(.initialWindowSize, 10_000)])
        server.send(HTTP2Frame(streamID: 0, .windowUpdate(increment: 1_000_000)))
        server.sendRequest(1, ScriptedServer.request(body: [UInt8](repeating: 1, count: 50_000)))
        #expect(ScriptedServer.dataSent(server.takeWritten())[1]?.octets == 10_000)
        // Down to 0: the stream's window is −10,000; a WINDOW_UPDATE of 4,000 leaves it negative.
        server.send(HTTP2Frame(streamID: 0, .settings([HTTP2Setting(.initialWindowSize, 0)], ack: false)))
        server.send(HTTP2Frame(streamID: 1, .windowUpdate(increment: 4_000)))
        #expect(ScriptedServer.dataSent(server.takeWritten())[1] == nil)
        // Up to 30,000: the window is −6,000 + 30,000.
        server.send(HTTP2Frame(streamID: 0, .settings([HTTP2Setting(.initialWindowSize, 30_000)], ack: false)))
        #expect(ScriptedServer.dataSent(server.takeWritten())[1]?.octets == 24_000)
    }

    @Test("a SETTINGS_INITIAL_WINDOW_SIZE that takes an open stream's window past 2^31-1 is a FLOW_CONTROL_ERROR")
    func initialWindowOverflow() {
        var server = ScriptedServer.open()
        server.sendRequest(1)
        server.send(HTTP2Frame(streamID: 1, .windowUpdate(increment: UInt32(Int32.max) - 65_535)))
        server.send(HTTP2Frame(streamID: 0, .settings([HTTP2Setting(.initialWindowSize, 65_536)], ack: false)))
        let events = server.takeEvents()
        #expect(events.last == .connectionError(.windowOverflow(streamID: 1)))
        #expect(
            server.written.last
                == HTTP2Frame(
                    streamID: 0,
                    .goAway(
                        lastStreamID: 0, error: .flowControlError,
                        debugData: Array(HTTP2ProtocolError.windowOverflow(streamID: 1).description.utf8))))
    }

    @Test("DATA received is given back with WINDOW_UPDATE once half a window is used")
    func receiveWindowUpdates() {
        var settings = HTTP2ClientConnection.Settings()
        settings.initialWindowSize = 65_535
        settings.connectionWindowSize = 65_535
        settings.maxResponseBody = 1 << 20
        var server = ScriptedServer.open(settings: settings)
        server.sendRequest(1)
        _ = server.takeWritten()
        let head = server.headers(1)
        server.send(head, HTTP2Frame(streamID: 1, .data([UInt8](repeating: 0, count: 16_384), endStream: false)))
        #expect(server.takeWritten().isEmpty)
        // Padding counts: 16,284 octets + 100 of padding bring the total to 32,768 ≥ 65,535 / 2.
        server.send(
            HTTP2Frame(streamID: 1, .data([UInt8](repeating: 0, count: 16_284), endStream: false, padding: 100)))
        #expect(
            server.takeWritten() == [
                HTTP2Frame(streamID: 0, .windowUpdate(increment: 32_768)),
                HTTP2Frame(streamID: 1, .windowUpdate(increment: 32_768)),
            ])
        // Windows given back as they fill: a body of 200,668 octets arrives whole.
        for _ in 0..<10 {
            server.send(HTTP2Frame(streamID: 1, .data([UInt8](repeating: 0, count: 16_000), endStream: false)))
        }
        server.send(HTTP2Frame(streamID: 1, .data([UInt8](repeating: 0, count: 8_000), endStream: true)))
        guard case .response(_, let response) = server.takeEvents().first else {
            Issue.record("no response")
            return
        }
        #expect(response.body.count == 200_668)
    }

    @Test("DATA beyond the stream's receive window is a FLOW_CONTROL_ERROR; every request fails")
    func streamOverrun() {
        var settings = HTTP2ClientConnection.Settings()
        settings.initialWindowSize = 65_535
        settings.maxFrameSize = 100_000
        var server = ScriptedServer.open(settings: settings)
        server.sendRequest(1)
        server.sendRequest(2)
        server.sendRequest(3)
        let head = server.headers(1)
        server.send(head, HTTP2Frame(streamID: 1, .data([UInt8](repeating: 0, count: 30_000), endStream: false)))
        _ = server.takeWritten()
        server.send(HTTP2Frame(streamID: 1, .data([UInt8](repeating: 0, count: 35_536), endStream: false)))
        let error = HTTP2ProtocolError.flowControlOverrun(streamID: 1, length: 35_536, window: 35_535)
        #expect(
            server.takeEvents() == [
                .failed(RequestID(1), .connectionEnded(error.description)),
                .failed(RequestID(2), .connectionEnded(error.description)),
                .failed(RequestID(3), .connectionEnded(error.description)),
                .connectionError(error),
            ])
        #expect(error.code == .flowControlError)
        guard case .goAway(_, let code, _) = server.takeWritten().last?.payload else {
            Issue.record("no GOAWAY")
            return
        }
        #expect(code == .flowControlError)
    }

    @Test("DATA beyond the connection's receive window is a FLOW_CONTROL_ERROR")
    func connectionOverrun() {
        var settings = HTTP2ClientConnection.Settings()
        settings.connectionWindowSize = 65_535
        settings.initialWindowSize = 1 << 20
        settings.maxFrameSize = 100_000
        var server = ScriptedServer.open(settings: settings)
        server.sendRequest(1)
        server.sendRequest(2)
        let (head1, head3) = (server.headers(1), server.headers(3))
        _ = server.takeWritten()
        server.send(
            head1, head3, HTTP2Frame(streamID: 1, .data([UInt8](repeating: 0, count: 30_000), endStream: false)))
        #expect(server.takeWritten().isEmpty)
        server.send(HTTP2Frame(streamID: 3, .data([UInt8](repeating: 0, count: 35_536), endStream: false)))
        #expect(
            server.takeEvents().last
                == .connectionError(.flowControlOverrun(streamID: 0, length: 35_536, window: 35_535)))
    }

    @Test("a field block across HEADERS and CONTINUATION frames")
    func continuation() {
        var server = ScriptedServer.open()
        server.sendRequest(1)
        let block = server.block([
            HeaderField(":status", "200"), HeaderField("apns-id", String(repeating: "a", count: 100)),
        ])
        server.send(
            HTTP2Frame(streamID: 1, .headers(fragment: Array(block[0..<10]), endStream: true, endHeaders: false)),
            HTTP2Frame(streamID: 1, .continuation(fragment: Array(block[10..<50]), endHeaders: false)),
            HTTP2Frame(streamID: 1, .continuation(fragment: Array(block[50...]), endHeaders: true)))
        #expect(
            server.takeEvents() == [
                .response(
                    RequestID(1),
                    HTTP2Response(status: 200, headers: [HeaderField("apns-id", String(repeating: "a", count: 100))]))
            ])
    }

    @Test("a request's field block longer than the server's frame size goes out as HEADERS + CONTINUATION")
    func requestContinuation() {
        var server = ScriptedServer.open()
        var request = ScriptedServer.request()
        request.headers.append(HeaderField("x-big", String(repeating: "b", count: 40_000)))
        server.sendRequest(1, request)
        let types = server.written.map(\.typeCode)
        #expect(types.count >= 2 && types.first == 1 && types.dropFirst().allSatisfy { $0 == 9 })
        let heads = server.takeRequestHeads()
        #expect(heads.first?.1.last == HeaderField("x-big", String(repeating: "b", count: 40_000)))
    }

    @Test("any frame but CONTINUATION inside a field block is a PROTOCOL_ERROR", arguments: [false, true])
    func interruptedFieldBlock(otherStream: Bool) {
        var server = ScriptedServer.open()
        server.sendRequest(1)
        server.sendRequest(2)
        let block = server.block([HeaderField(":status", "200")])
        server.send(
            HTTP2Frame(streamID: 1, .headers(fragment: Array(block.prefix(1)), endStream: false, endHeaders: false)))
        if otherStream {
            server.send(HTTP2Frame(streamID: 3, .continuation(fragment: Array(block.dropFirst()), endHeaders: true)))
            #expect(server.takeEvents().last == .connectionError(.continuationExpected(streamID: 1, type: 9)))
        } else {
            server.send(HTTP2Frame(streamID: 0, .ping(opaque: 0, ack: false)))
            #expect(server.takeEvents().last == .connectionError(.continuationExpected(streamID: 1, type: 6)))
        }
        #expect(server.connection.state == .closed)
    }

    @Test("a CONTINUATION with no field block open is a PROTOCOL_ERROR")
    func strayContinuation() {
        var server = ScriptedServer.open()
        server.sendRequest(1)
        server.send(HTTP2Frame(streamID: 1, .continuation(fragment: [0x88], endHeaders: true)))
        #expect(server.takeEvents().last == .connectionError(.unexpectedContinuation(streamID: 1)))
    }

    @Test("an endless field block is refused past twice the header list limit")
    func endlessFieldBlock() {
        var settings = HTTP2ClientConnection.Settings()
        settings.maxHeaderListSize = 8192
        var server = ScriptedServer.open(settings: settings)
        server.sendRequest(1)
        server.send(HTTP2Frame(streamID: 1, .headers(fragment: [0x88], endStream: false, endHeaders: false)))
        for _ in 0..<2 {
            server.send(
                HTTP2Frame(
                    streamID: 1, .continuation(fragment: [UInt8](repeating: 0, count: 10_000), endHeaders: false)))
        }
        #expect(server.takeEvents().last == .connectionError(.fieldBlockTooLarge(length: 20_001, limit: 16_384)))
    }

    @Test("GOAWAY: streams above the last one fail as unprocessed, those below finish, nothing new starts")
    func goAway() {
        var server = ScriptedServer.open([HTTP2Setting(.maxConcurrentStreams, 3)])
        for id in 1...4 { server.sendRequest(UInt64(id)) }
        server.send(HTTP2Frame(streamID: 0, .goAway(lastStreamID: 1, error: .noError, debugData: Array("bye".utf8))))
        #expect(
            server.takeEvents() == [
                .failed(RequestID(2), .goneAway(lastStreamID: 1, .noError)),
                .failed(RequestID(3), .goneAway(lastStreamID: 1, .noError)),
                .failed(RequestID(4), .notSent("the server is going away (GOAWAY NO_ERROR)")),
                .goAway(lastStreamID: 1, error: .noError, debug: "bye"),
            ])
        #expect(HTTP2StreamError.goneAway(lastStreamID: 1, .noError).isUnprocessed)
        #expect(server.connection.state == .goingAway(lastStreamID: 1) && !server.connection.isAcceptingRequests)
        server.sendRequest(5)
        #expect(server.takeEvents() == [.failed(RequestID(5), .notSent("the connection takes no new streams"))])
        let head = server.headers(1, endStream: true)
        server.send(head)
        #expect(server.takeEvents() == [.response(RequestID(1), HTTP2Response(status: 200))])
        #expect(server.connection.openStreams == 0)
    }

    @Test("RST_STREAM: REFUSED_STREAM is unprocessed, other codes may have been processed")
    func rstStream() {
        var server = ScriptedServer.open()
        server.sendRequest(1)
        server.sendRequest(2)
        server.send(
            HTTP2Frame(streamID: 1, .rstStream(.refusedStream)), HTTP2Frame(streamID: 3, .rstStream(.internalError)))
        #expect(
            server.takeEvents() == [.failed(RequestID(1), .refused), .failed(RequestID(2), .reset(.internalError))])
        #expect(HTTP2StreamError.refused.isUnprocessed && !HTTP2StreamError.reset(.internalError).isUnprocessed)
        // WINDOW_UPDATE, RST_STREAM and PRIORITY on the streams the server reset are ignored (§5.1).
        server.send(
            HTTP2Frame(streamID: 1, .windowUpdate(increment: 10)), HTTP2Frame(streamID: 3, .rstStream(.cancel)),
            HTTP2Frame(streamID: 3, .priority(HTTP2Priority(exclusive: false, dependency: 0, weight: 15))))
        #expect(server.takeEvents().isEmpty && server.connection.state == .open)
        // HEADERS after the server's RST_STREAM: STREAM_CLOSED, raised to a connection error (§5.1, §5.4.1).
        let late = server.headers(1, endStream: true)
        server.send(late)
        #expect(server.takeEvents() == [.connectionError(.frameOnClosedStream(.headers, streamID: 1))])
        #expect(HTTP2ProtocolError.frameOnClosedStream(.headers, streamID: 1).code == .streamClosed)
    }

    @Test("DATA or HEADERS on a stream the server ended is a STREAM_CLOSED connection error (§5.1)", arguments: [0, 1])
    func frameAfterEndStream(_ kind: Int) {
        var server = ScriptedServer.open()
        server.sendRequest(1)
        server.sendRequest(2)
        let head = server.headers(1, endStream: true)
        server.send(head)
        #expect(server.takeEvents() == [.response(RequestID(1), HTTP2Response(status: 200))])
        // Frames that may cross our END_STREAM are ignored.
        server.send(
            HTTP2Frame(streamID: 1, .windowUpdate(increment: 100)), HTTP2Frame(streamID: 1, .rstStream(.noError)),
            HTTP2Frame(streamID: 1, .priority(HTTP2Priority(exclusive: false, dependency: 0, weight: 15))))
        #expect(server.takeEvents().isEmpty && server.connection.state == .open)
        let late = kind == 0 ? HTTP2Frame(streamID: 1, .data([1, 2, 3], endStream: true)) : server.headers(1)
        server.send(late)
        let type: HTTP2FrameType = kind == 0 ? .data : .headers
        let error = HTTP2ProtocolError.frameOnClosedStream(type, streamID: 1)
        #expect(
            server.takeEvents() == [
                .failed(RequestID(2), .connectionEnded(error.description)), .connectionError(error),
            ])
        #expect(
            server.takeWritten().last
                == HTTP2Frame(
                    streamID: 0,
                    .goAway(lastStreamID: 0, error: .streamClosed, debugData: Array(error.description.utf8))))
    }

    @Test("anything on a stream we reset is ignored, even past the resets remembered one by one")
    func frameAfterOurReset() {
        var server = ScriptedServer.open()
        let count = HTTP2ClientConnection.maxRememberedResets + 10
        for id in 1...count { server.sendRequest(UInt64(id)) }
        for id in 1...count { server.take(server.connection.cancel(RequestID(UInt64(id)))) }
        #expect(server.connection.resetStreams.count == HTTP2ClientConnection.maxRememberedResets)
        for stream in [UInt32(1), 21, UInt32(2 * count - 1)] {
            let head = server.headers(stream, endStream: false)
            server.send(head, HTTP2Frame(streamID: stream, .data([1, 2], endStream: true)))
        }
        #expect(server.takeEvents().isEmpty && server.connection.state == .open)
    }

    @Test("a server SETTINGS with ENABLE_PUSH=1 is a PROTOCOL_ERROR (§6.5.2); ENABLE_PUSH=0 is fine")
    func serverEnablesPush() {
        var server = ScriptedServer.open([HTTP2Setting(.enablePush, 0)])
        #expect(server.connection.state == .open)
        server.send(HTTP2Frame(streamID: 0, .settings([HTTP2Setting(.enablePush, 1)], ack: false)))
        #expect(server.takeEvents() == [.connectionError(.serverEnabledPush)])
        #expect(HTTP2ProtocolError.serverEnabledPush.code == .protocolError)
    }

    @Test("a server lowering MAX_CONCURRENT_STREAMS below the open streams: none starts until below the new limit")
    func loweredStreamLimit() {
        var server = ScriptedServer.open([HTTP2Setting(.maxConcurrentStreams, 3)])
        for id in 1...5 { server.sendRequest(UInt64(id)) }
        #expect(server.connection.openStreams == 3 && server.connection.queuedRequests == 2)
        server.send(HTTP2Frame(streamID: 0, .settings([HTTP2Setting(.maxConcurrentStreams, 1)], ack: false)))
        #expect(server.connection.openStreams == 3 && server.connection.availableStreams == 0)
        _ = server.takeRequestHeads()
        for stream in [UInt32(1), 3] {
            let head = server.headers(stream, endStream: true)
            server.send(head)
            #expect(server.takeRequestHeads().isEmpty, "stream \(stream) closed: still at the new limit")
        }
        let head = server.headers(5, endStream: true)
        server.send(head)
        #expect(server.takeRequestHeads().map(\.0) == [7])
        #expect(server.connection.openStreams == 1)
    }

    @Test(
        "a flood of PINGs whose ACKs are not written ends the connection (ENHANCE_YOUR_CALM); written ACKs don't count")
    func acknowledgementFlood() {
        var settings = HTTP2ClientConnection.Settings()
        settings.maxUnwrittenAcks = 10
        var server = ScriptedServer.open(settings: settings)
        // The SETTINGS ACK of `open` is not reported written: it counts.
        for opaque in 1...9 { server.send(HTTP2Frame(streamID: 0, .ping(opaque: UInt64(opaque), ack: false))) }
        #expect(server.takeEvents().isEmpty)
        server.send(HTTP2Frame(streamID: 0, .ping(opaque: 10, ack: false)))
        #expect(server.takeEvents() == [.connectionError(.acknowledgementFlood(limit: 10))])
        #expect(HTTP2ProtocolError.acknowledgementFlood(limit: 10).code == .enhanceYourCalm)

        var drained = ScriptedServer.open(settings: settings)
        for opaque in 1...100 {
            drained.send(HTTP2Frame(streamID: 0, .ping(opaque: UInt64(opaque), ack: false)))
            drained.connection.written(through: drained.connection.octetsWritten)
        }
        drained.send(HTTP2Frame(streamID: 0, .settings([], ack: false)))
        #expect(drained.takeEvents().isEmpty && drained.connection.state == .open)
        // Written up to just before the last ACK's end: that one still counts.
        for opaque in 1...9 { drained.send(HTTP2Frame(streamID: 0, .ping(opaque: UInt64(opaque), ack: false))) }
        drained.connection.written(through: drained.connection.octetsWritten - 1)
        #expect(drained.connection.unwrittenAcks.count - drained.connection.unwrittenAcksHead == 1)
    }

    @Test("frames on streams never opened are a PROTOCOL_ERROR", arguments: [UInt32(3), 2])
    func idleStream(_ stream: UInt32) {
        var server = ScriptedServer.open()
        server.sendRequest(1)
        server.send(HTTP2Frame(streamID: stream, .rstStream(.cancel)))
        #expect(server.takeEvents().last == .connectionError(.frameOnIdleStream(.rstStream, streamID: stream)))
    }

    @Test("PING: the server's is echoed with ACK; ours is acknowledged once, by its own payload")
    func ping() {
        var server = ScriptedServer.open()
        server.send(HTTP2Frame(streamID: 0, .ping(opaque: 0xdead_beef, ack: false)))
        #expect(server.takeWritten() == [HTTP2Frame(streamID: 0, .ping(opaque: 0xdead_beef, ack: true))])
        server.take(server.connection.ping(now: 42))
        #expect(server.takeWritten() == [HTTP2Frame(streamID: 0, .ping(opaque: 42, ack: false))])
        server.send(HTTP2Frame(streamID: 0, .ping(opaque: 41, ack: true)))
        #expect(server.takeEvents().isEmpty)
        server.send(
            HTTP2Frame(streamID: 0, .ping(opaque: 42, ack: true)), HTTP2Frame(streamID: 0, .ping(opaque: 42, ack: true))
        )
        #expect(server.takeEvents() == [.pingAcked])
    }

    @Test("PUSH_PROMISE, which we disabled, is a PROTOCOL_ERROR")
    func pushPromise() {
        var server = ScriptedServer.open()
        server.sendRequest(1)
        server.send(HTTP2Frame(streamID: 1, .pushPromise(promisedStreamID: 2, fragment: [0x82], endHeaders: true)))
        let events = server.takeEvents()
        #expect(events.last == .connectionError(.pushPromiseReceived(streamID: 1)))
        #expect(HTTP2ProtocolError.pushPromiseReceived(streamID: 1).code == .protocolError)
        #expect(
            events.first
                == .failed(
                    RequestID(1), .connectionEnded(HTTP2ProtocolError.pushPromiseReceived(streamID: 1).description)))
    }

    @Test("a body past maxResponseBody cancels the stream; the connection goes on")
    func responseTooLarge() {
        var settings = HTTP2ClientConnection.Settings()
        settings.maxResponseBody = 1000
        var server = ScriptedServer.open(settings: settings)
        server.sendRequest(1)
        server.sendRequest(2)
        _ = server.takeWritten()
        let head = server.headers(1)
        server.send(head, HTTP2Frame(streamID: 1, .data([UInt8](repeating: 0, count: 600), endStream: false)))
        server.send(HTTP2Frame(streamID: 1, .data([UInt8](repeating: 0, count: 600), endStream: false)))
        #expect(server.takeEvents() == [.failed(RequestID(1), .responseTooLarge(limit: 1000))])
        #expect(server.takeWritten() == [HTTP2Frame(streamID: 1, .rstStream(.cancel))])
        let other = server.headers(3, endStream: true)
        server.send(HTTP2Frame(streamID: 1, .data([1], endStream: true)), other)
        #expect(server.takeEvents() == [.response(RequestID(2), HTTP2Response(status: 200))])
    }

    static let malformedHeads: [(String, [HeaderField], Bool)] = [
        ("no :status", [HeaderField("server", "x")], true),
        ("a request pseudo-header", [HeaderField(":status", "200"), HeaderField(":path", "/")], true),
        ("a pseudo-header after a regular field", [HeaderField("server", "x"), HeaderField(":status", "200")], true),
        ("a connection-specific field", [HeaderField(":status", "200"), HeaderField("connection", "close")], true),
        ("a status of two digits", [HeaderField(":status", "20")], true),
        ("a CR in a value", [HeaderField(":status", "200"), HeaderField("x", "a\rb")], true),
        (
            "content-length that the body does not match",
            [HeaderField(":status", "200"), HeaderField("content-length", "5")], true
        ),
        ("an informational head that ends the stream", [HeaderField(":status", "100")], true),
    ]

    @Test(
        "a malformed response resets its stream (PROTOCOL_ERROR) and fails the request",
        arguments: malformedHeads.indices)
    func malformed(_ index: Int) {
        let (name, fields, endStream) = Self.malformedHeads[index]
        var server = ScriptedServer.open()
        server.sendRequest(1)
        _ = server.takeWritten()
        let block = server.block(fields)
        server.send(HTTP2Frame(streamID: 1, .headers(fragment: block, endStream: endStream, endHeaders: true)))
        let events = server.takeEvents()
        guard case .failed(RequestID(1), .malformedResponse) = events.first, events.count == 1 else {
            Issue.record("\(name): \(events)")
            return
        }
        #expect(server.takeWritten() == [HTTP2Frame(streamID: 1, .rstStream(.protocolError))], "\(name)")
        #expect(server.connection.state == .open)
    }

    @Test("a field name with capitals is malformed (HPACK carries it as sent; RFC 9113 §8.2.1)")
    func upperCaseName() {
        var server = ScriptedServer.open()
        server.sendRequest(1)
        _ = server.takeWritten()
        // RFC 7541 §6.2.2: literal without indexing, new name "Server", value "x", no Huffman.
        let literal: [UInt8] = [0x00, 0x06] + Array("Server".utf8) + [0x01, 0x78]
        let block = server.block([HeaderField(":status", "200")]) + literal
        server.send(HTTP2Frame(streamID: 1, .headers(fragment: block, endStream: true, endHeaders: true)))
        #expect(
            server.takeEvents() == [
                .failed(RequestID(1), .malformedResponse("field name \"Server\" is not a lower-case token"))
            ])
        #expect(server.takeWritten() == [HTTP2Frame(streamID: 1, .rstStream(.protocolError))])
    }

    @Test("cancel: a waiting request is dropped, an open stream reset with CANCEL; neither is answered")
    func cancel() {
        var server = ScriptedServer.open([HTTP2Setting(.maxConcurrentStreams, 1)])
        server.sendRequest(1)
        server.sendRequest(2)
        server.sendRequest(3)
        _ = server.takeWritten()
        server.take(server.connection.cancel(RequestID(2)))
        #expect(server.takeWritten().isEmpty && server.connection.queuedRequests == 1)
        server.take(server.connection.cancel(RequestID(1)))
        #expect(server.written.first == HTTP2Frame(streamID: 1, .rstStream(.cancel)))
        #expect(server.takeRequestHeads().map(\.0) == [3])
        #expect(server.takeEvents().isEmpty)
    }

    @Test("close sends GOAWAY, fails open requests as possibly processed and waiting ones as not sent")
    func close() {
        var server = ScriptedServer.open([HTTP2Setting(.maxConcurrentStreams, 1)])
        server.sendRequest(1)
        server.sendRequest(2)
        _ = server.takeWritten()
        server.take(server.connection.close())
        #expect(
            server.takeWritten() == [HTTP2Frame(streamID: 0, .goAway(lastStreamID: 0, error: .noError, debugData: []))])
        #expect(
            server.takeEvents() == [
                .failed(RequestID(1), .connectionEnded("the connection was closed")),
                .failed(RequestID(2), .notSent("the connection was closed")),
            ])
        #expect(server.connection.close().isEmpty)
        #expect(server.connection.received([0, 0, 0, 4, 1, 0, 0, 0, 0]).isEmpty)
    }

    @Test("a response before the whole request body ends the body with RST_STREAM NO_ERROR")
    func earlyResponse() {
        var server = ScriptedServer.open()
        server.sendRequest(1, ScriptedServer.request(body: [UInt8](repeating: 1, count: 100_000)))
        _ = server.takeWritten()
        let head = server.headers(1, status: 413, endStream: true)
        server.send(head)
        #expect(server.takeEvents() == [.response(RequestID(1), HTTP2Response(status: 413))])
        #expect(server.takeWritten() == [HTTP2Frame(streamID: 1, .rstStream(.noError))])
        server.send(
            HTTP2Frame(streamID: 0, .windowUpdate(increment: 100_000)),
            HTTP2Frame(streamID: 1, .windowUpdate(increment: 100_000)))
        #expect(server.takeWritten().isEmpty)
    }

    @Test("WINDOW_UPDATE past 2^31-1: on the connection a FLOW_CONTROL_ERROR, on a stream its reset")
    func windowOverflow() {
        var server = ScriptedServer.open()
        server.sendRequest(1)
        _ = server.takeWritten()
        server.send(HTTP2Frame(streamID: 1, .windowUpdate(increment: UInt32(Int32.max))))
        #expect(server.takeEvents() == [.failed(RequestID(1), .windowOverflow)])
        #expect(server.takeWritten() == [HTTP2Frame(streamID: 1, .rstStream(.flowControlError))])
        server.send(HTTP2Frame(streamID: 0, .windowUpdate(increment: UInt32(Int32.max))))
        #expect(server.takeEvents() == [.connectionError(.windowOverflow(streamID: 0))])
    }

    @Test("WINDOW_UPDATE of 0 on the connection is a PROTOCOL_ERROR")
    func zeroIncrement() {
        var server = ScriptedServer.open()
        server.send(HTTP2Frame(streamID: 0, .windowUpdate(increment: 0)))
        #expect(server.takeEvents() == [.connectionError(.zeroWindowIncrement)])
    }

    @Test("the server's SETTINGS_HEADER_TABLE_SIZE and SETTINGS_MAX_FRAME_SIZE are used; bad values refused")
    func peerSettings() {
        var server = ScriptedServer.open([HTTP2Setting(.maxFrameSize, 20_000), HTTP2Setting(.headerTableSize, 0)])
        #expect(server.connection.peerSettings.maxFrameSize == 20_000)
        server.send(
            HTTP2Frame(
                streamID: 0, .settings([HTTP2Setting(.enablePush, 0), HTTP2Setting(.enablePush, 7)], ack: false)))
        #expect(server.takeEvents() == [.connectionError(.badSettingValue(HTTP2Setting(.enablePush, 7)))])
    }
}
