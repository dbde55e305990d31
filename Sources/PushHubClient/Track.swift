import ScreenTree

/// A goal event the app reports for experiment results (DESIGN §6):
/// `{"type":"track","event":"purchase","value":12.5}`.
///
/// Invariant: `event` is 1–64 characters of `[A-Za-z0-9_.:-]` and `value`, when set, is finite —
/// what the hub accepts (docs/protocol.md), checked here so that a bad one is refused at the
/// call that made it rather than by a `bad_track` error from the hub later, on another thread.
struct Track: Equatable, Sendable {
    static let maxEventLength = 64

    let event: String
    let value: Double?

    /// - Throws: the `HubError` the hub would answer (`bad_track`, ref `track`), saying what to fix.
    init(event: String, value: Double?) throws(HubError) {
        let bytes = Array(event.utf8)
        guard !bytes.isEmpty else { throw Self.refusal("the event name is empty") }
        if let index = bytes.firstIndex(where: { !Self.isAllowed($0) }) {
            // Every byte before it is ASCII: the offset is a scalar boundary.
            let scalar = event.unicodeScalars[event.utf8.index(event.utf8.startIndex, offsetBy: index)]
            throw Self.refusal("the event name \"\(event)\" has \"\(scalar)\" at offset \(index)")
        }
        guard bytes.count <= Self.maxEventLength else {
            throw Self.refusal("the event name is \(bytes.count) characters long")
        }
        if let value, !value.isFinite {
            throw HubError(
                code: "bad_track", message: "the value of \"\(event)\" is \(value); it must be a finite number",
                ref: "track", screen: nil)
        }
        self.event = event
        self.value = value
    }

    /// The message to send.
    var message: JSONObject {
        var message: JSONObject = ["type": .string("track"), "event": .string(event)]
        if let value { message["value"] = .number(value) }
        return message
    }

    private static func isAllowed(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: ":"),
            UInt8(ascii: "-"):
            true
        default: false
        }
    }

    private static func refusal(_ problem: String) -> HubError {
        HubError(
            code: "bad_track",
            message: "\(problem); an event name is 1 to \(maxEventLength) characters of A-Z a-z 0-9 _ . : -",
            ref: "track", screen: nil)
    }
}
