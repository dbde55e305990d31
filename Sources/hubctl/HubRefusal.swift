import PushHub

/// A refusal of the hub for people (DESIGN §8: exit 1 prints the hub's message): the status and
/// message, then each error the answer lists on a line of its own — `pointer: message` for a
/// tree that breaks the registered components (422 `invalid_tree`, DESIGN §16), and each screen
/// a component's registration would break with its errors under it (409 `screens_violate`).
///
/// Invariant: `details` holds one line per listed error (and per screen), never a line joined
/// from several; an answer that lists nothing has none.
struct HubRefusal {
    var status: Int
    /// `error.code` of the admin API's JSON error; nil for an answer without one.
    var code: String?
    var message: String
    var details: [String]

    init(_ answer: AdminClient.Answer) {
        status = answer.status
        message = answer.errorMessage
        let error = (try? JSONReader.parse(answer.body))?["error"]
        code = error?["code"]?.stringValue
        details = Self.errorLines(error?["errors"]?.arrayValue ?? [], indent: "  ")
        if error?["truncated"] == .bool(true) { details.append("  … and more: the hub lists the first 1000") }
        details += Self.screenLines(error?["screens"]?.arrayValue ?? [], indent: "  ")
    }

    /// `the hub refused (422): message`, then the details.
    var text: String { (["the hub refused (\(status)): \(message)"] + details).joined(separator: "\n") }

    /// `/children/1: Carousel has no version 3 (registered: 1, 2)`, one line per
    /// `{"pointer","message"}`; the root's empty pointer reads `(root)`.
    static func errorLines(_ errors: [JSONValue], indent: String) -> [String] {
        errors.map { error in
            let pointer = error["pointer"]?.stringValue ?? ""
            return indent + (pointer.isEmpty ? "(root)" : pointer) + ": " + (error["message"]?.stringValue ?? "")
        }
    }

    /// `home v3:` for each `{"screen","version","errors"}`, with its errors indented under it.
    static func screenLines(_ screens: [JSONValue], indent: String) -> [String] {
        screens.flatMap { screen in
            let version = screen["version"]?.intValue.map { " v\($0)" } ?? ""
            return [indent + (screen["screen"]?.stringValue ?? "-") + version + ":"]
                + errorLines(screen["errors"]?.arrayValue ?? [], indent: indent + "  ")
        }
    }
}
