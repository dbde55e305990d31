import WSProtocol

/// Messages the hub sends (DESIGN §3), encoded straight to complete WebSocket text frames so
/// that one encoding can be written to many sockets.
///
/// Invariant: every result is one unmasked, final text frame holding one JSON object.
public enum ServerMessage {
    static func frame(_ json: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(json.count + 10)
        FrameEncoder.appendFrame(opcode: .text, payload: json, to: &out)
        return out
    }

    static func object(_ members: [(String, JSONValue)], raw: (String, [UInt8])? = nil) -> [UInt8] {
        var out: [UInt8] = [UInt8(ascii: "{")]
        for (i, (key, value)) in members.enumerated() {
            if i > 0 { out.append(UInt8(ascii: ",")) }
            JSONWriter.writeString(key, to: &out)
            out.append(UInt8(ascii: ":"))
            JSONWriter.write(value, to: &out)
        }
        if let (key, bytes) = raw {
            out.append(UInt8(ascii: ","))
            JSONWriter.writeString(key, to: &out)
            out.append(UInt8(ascii: ":"))
            out += bytes
        }
        out.append(UInt8(ascii: "}"))
        return out
    }

    public static func welcome(session: String, user: String?, heartbeatSeconds: Int, syncSeq: Int, epoch: String)
        -> [UInt8]
    {
        frame(
            object([
                ("type", .string("welcome")), ("session", .string(session)),
                ("user", user.map(JSONValue.string) ?? .null),
                ("heartbeat_s", .number(Double(heartbeatSeconds))), ("sync_seq", .number(Double(syncSeq))),
                ("epoch", .string(epoch)),
            ]))
    }

    /// The answer to a subscribe to a screen that has no version yet: the subscription stays,
    /// and the first publish brings its `snapshot`.
    public static func pending(screen: String) -> [UInt8] {
        frame(object([("type", .string("pending")), ("screen", .string(screen))]))
    }

    /// A ping then `{"type":"heartbeat"}`, one write for a client that asked for heartbeats
    /// (DESIGN §3): the ping keeps telling the hub the client is alive (every stack answers it),
    /// the text message tells the client the hub is (browsers cannot see pings). The same bytes
    /// for every client, never compressed.
    public static let pingAndHeartbeat: [UInt8] = {
        var out: [UInt8] = []
        FrameEncoder.appendFrame(opcode: .ping, payload: [], to: &out)
        FrameEncoder.appendFrame(opcode: .text, payload: Array(#"{"type":"heartbeat"}"#.utf8), to: &out)
        return out
    }()

    /// `variants`: the app's variants on the screen (DESIGN §6), left out when there are none.
    public static func snapshot(screen: String, version: Int, rendered: RenderedTree, variants: JSONObject) -> [UInt8] {
        frame(object(snapshotMembers(screen: screen, version: version, rendered: rendered, variants: variants), raw: ("tree", rendered.canonical)))
    }

    private static func snapshotMembers(screen: String, version: Int, rendered: RenderedTree, variants: JSONObject)
        -> [(String, JSONValue)]
    {
        var members: [(String, JSONValue)] = [
            ("type", .string("snapshot")), ("screen", .string(screen)), ("version", .number(Double(version))),
            ("hash", .string(rendered.hash)),
        ]
        if !variants.isEmpty { members.append(("variants", .object(variants))) }
        return members
    }

    /// The size of `snapshot(...)`'s frame, without building it.
    public static func snapshotSize(screen: String, version: Int, rendered: RenderedTree, variants: JSONObject) -> Int {
        let json =
            object(snapshotMembers(screen: screen, version: version, rendered: rendered, variants: variants), raw: ("tree", []))
            .count + rendered.canonical.count
        return json + FrameHeader(opcode: .text, payloadLength: UInt64(json)).encodedSize
    }

    /// `variants`: the app's new variants on the screen (DESIGN §6), when they changed (nil: as before).
    public static func patch(
        screen: String, from: Int, version: Int, hash: String, ops: JSONPatch, variants: JSONObject? = nil
    ) -> [UInt8] {
        var members: [(String, JSONValue)] = [
            ("type", .string("patch")), ("screen", .string(screen)), ("from", .number(Double(from))),
            ("version", .number(Double(version))), ("hash", .string(hash)),
        ]
        if let variants { members.append(("variants", .object(variants))) }
        return frame(object(members, raw: ("ops", JSONWriter.write(ops.json))))
    }

    /// `variants` as in `snapshot`.
    public static func unchanged(screen: String, version: Int, hash: String, variants: JSONObject = JSONObject()) -> [UInt8] {
        var members: [(String, JSONValue)] = [
            ("type", .string("unchanged")), ("screen", .string(screen)), ("version", .number(Double(version))),
            ("hash", .string(hash)),
        ]
        if !variants.isEmpty { members.append(("variants", .object(variants))) }
        return frame(object(members))
    }

    public static func gone(screen: String) -> [UInt8] {
        frame(object([("type", .string("gone")), ("screen", .string(screen))]))
    }

    public static func error(_ error: WireError) -> [UInt8] {
        frame(
            object([
                ("type", .string("error")), ("code", .string(error.code)), ("message", .string(error.message)),
                ("ref", error.ref.map(JSONValue.string) ?? .null),
            ]))
    }
}
