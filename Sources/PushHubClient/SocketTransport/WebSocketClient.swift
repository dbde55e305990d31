// Linux only, like the rest of SocketTransport/: Apple's platforms use URLSessionTransport.
#if PUSHHUB_SOCKET_TRANSPORT
    import Sockets
    import WSProtocol

    /// A blocking WebSocket client on WSProtocol's client side: `hubctl watch`, the Autobahn
    /// client testee and the benchmarks use it.
    ///
    /// It offers permessage-deflate (RFC 7692) unless told not to: what the server sends compressed
    /// is inflated (with the server's context kept between messages unless it agreed
    /// `server_no_context_takeover`), and messages of at least `compressionMinimumBytes` are sent
    /// compressed, each alone.
    ///
    /// Invariant: after `init` the handshake has succeeded; frames it sends are masked with a fresh
    /// key each; frames it receives are decoded by a client-role `MessageReader`; `inflater` is set
    /// exactly when compression was agreed.
    public final class WebSocketClient {
        /// One received message or control frame, copied out of the reader's buffers.
        public enum Message: Equatable {
            case text(String)
            case binary([UInt8])
            case ping([UInt8])
            case pong([UInt8])
            case close(ClosePayload)
        }

        /// The connection: the socket, or TLS over it.
        public let channel: any ByteChannel
        public let subprotocol: String?
        /// permessage-deflate as the server agreed it (nil: not offered or declined).
        public let compression: DeflateParameters?
        private var reader: MessageReader
        private var pending: [UInt8]
        private let inflater: Inflater?
        /// Made at the first message worth compressing (zlib's deflate state is ~256 KiB).
        private var deflater: Deflater?
        private let compressionMinimumBytes: Int

        /// - Parameters:
        ///   - compresses: offer permessage-deflate.
        ///   - compressionMinimumBytes: smaller messages go uncompressed.
        public init(
            address: SocketAddress, path: String, subprotocols: [String] = [], headers: HeaderFields = HeaderFields(),
            limits: ProtocolLimits = .echo, source: String? = nil, timeout: Duration = .seconds(10),
            tls: TLSTrust? = nil,
            compresses: Bool = true, compressionMinimumBytes: Int = 256
        ) throws {
            self.compressionMinimumBytes = compressionMinimumBytes
            channel = try TLSChannel.open(to: address, from: source, timeout: timeout, tls: tls)
            channel.setTimeout(timeout)
            let handshake = ClientHandshake(
                host: address.description, path: path, subprotocols: subprotocols, extraHeaders: headers,
                offersCompression: compresses)
            try channel.write(handshake.request)
            var received: [UInt8] = []
            var agreed: DeflateParameters?
            while true {
                let chunk = try channel.read(max: 64 << 10)
                if chunk.isEmpty {
                    throw HandshakeError(status: 0, reason: "the server closed the connection during the handshake")
                }
                received += chunk
                if let response = try ClientHandshake.parseResponse(received) {
                    subprotocol = try handshake.verify(response)
                    agreed = try handshake.agreedCompression(response)
                    pending = Array(received[response.headLength...])
                    break
                }
            }
            compression = agreed
            inflater = agreed.map { Inflater(resetsEachMessage: $0.serverNoContextTakeover) }
            reader = MessageReader(role: .client, limits: limits, acceptsCompressed: agreed != nil)
        }

        /// Sends one message as a single masked frame (or `fragmentSize`-byte fragments), compressed
        /// when that was agreed and it is a data message of at least `compressionMinimumBytes`.
        public func send(_ opcode: Opcode, _ message: [UInt8], fragmentSize: Int? = nil) throws {
            var payload = message
            var rsv: UInt8 = 0
            if let compression, !opcode.isControl, message.count >= compressionMinimumBytes {
                let deflater = self.deflater ?? Deflater(windowBits: compression.clientMaxWindowBits)
                self.deflater = deflater
                payload = deflater.compress(message)
                rsv = FrameHeader.compressedBit
            }
            var out: [UInt8] = []
            let size = fragmentSize.map { max($0, 1) } ?? max(payload.count, 1)
            var start = 0
            repeat {
                let end = min(start + size, payload.count)
                payload[start..<end].withUnsafeBytes { bytes in
                    FrameEncoder.appendFrame(
                        opcode: start == 0 ? opcode : .continuation, fin: end == payload.count,
                        rsv: start == 0 ? rsv : 0,
                        payload: bytes, maskingKey: .random(), to: &out)
                }
                start = end
            } while start < payload.count
            try channel.write(out)
        }

        public func sendText(_ text: String) throws { try send(.text, Array(text.utf8)) }

        public func sendClose(_ code: CloseCode = .normal, reason: String = "") throws {
            var out: [UInt8] = []
            FrameEncoder.appendClose(ClosePayload(code: code, reason: reason), maskingKey: .random(), to: &out)
            try channel.write(out)
        }

        /// Reads and discards until the server closes TCP (or the read timeout passes): what a
        /// client does after its close frame, so that the server closes first (RFC 6455 §7.1.1).
        public func waitUntilClosed() {
            // A read error (a reset, the timeout) ends the wait as the end of stream does.
            while let chunk = try? channel.read(max: 64 << 10), !chunk.isEmpty {}
        }

        /// Waits for the next message or control frame; nil at end of stream.
        public func receive() throws -> Message? {
            while true {
                if !pending.isEmpty, let message = try decodePending() { return message }
                let chunk = try channel.read(max: 64 << 10)
                if chunk.isEmpty { return nil }
                pending += chunk
            }
        }

        private func decodePending() throws -> Message? {
            var offset = 0
            let message: Message? = try pending.withUnsafeMutableBytes { buffer in
                let event = try reader.next(in: buffer, offset: &offset, inflater: inflater)
                switch event {
                case .needMoreBytes: return nil
                case .message(let opcode, let payload):
                    let bytes = reader.withBytes(of: payload, input: buffer) { Array($0) }
                    return opcode == .text ? .text(String(decoding: bytes, as: UTF8.self)) : .binary(bytes)
                case .ping(let payload): return .ping(reader.withBytes(of: payload, input: buffer) { Array($0) })
                case .pong(let payload): return .pong(reader.withBytes(of: payload, input: buffer) { Array($0) })
                case .close(let close): return .close(close)
                }
            }
            pending.removeFirst(offset)
            return message
        }
    }
#endif
