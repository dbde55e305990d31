import Foundation
import PushHub
import PushHubClient

/// A capability list as typed on the command line: `Carousel:2,Text:1` (or `Carousel=2,Text=1`),
/// each component with the highest version a build renders (DESIGN §16). `app components set`
/// sends it as a profile's `components`, `screen get --components` as the `components` query
/// parameter, in the hub's own spelling (`Carousel:2,Text:1`).
///
/// Invariant: a parsed list holds distinct names of 1–100 of `A-Z a-z 0-9 . _ -`, each with an
/// integer 1…1000, in the order typed: the contract's capability values, so a typo is refused
/// here (exit 2) before any request is sent.
struct ComponentList {
    var entries: [(name: String, version: Int)]

    /// Parses `text`; an empty text is the empty list (a build that renders no registered component).
    init(parsing text: String) throws(UsageError) {
        entries = []
        guard !text.isEmpty else { return }
        for item in text.split(separator: ",", omittingEmptySubsequences: false) {
            let pair = item.trimmingCharacters(in: .whitespaces)
            guard let separator = pair.firstIndex(where: { $0 == ":" || $0 == "=" }) else {
                throw UsageError("'\(pair)' is not NAME:VERSION; write the components as Carousel:2,Text:1.")
            }
            let name = String(pair[..<separator])
            let number = String(pair[pair.index(after: separator)...])
            guard ComponentCapabilities.isName(name) else {
                throw UsageError("'\(name)' is not a component name: 1 to 100 of A-Z a-z 0-9 . _ -")
            }
            guard number.allSatisfy({ ("0"..."9").contains($0) }), let version = Int(number),
                ComponentCapabilities.versions.contains(version)
            else {
                throw UsageError("\(name)'s version must be a whole number from 1 to 1000, not '\(number)'.")
            }
            guard !entries.contains(where: { $0.name == name }) else {
                throw UsageError("\(name) is given twice in '\(text)'.")
            }
            entries.append((name, version))
        }
    }

    /// The hub's `{"Carousel":2,"Text":1}`.
    var json: JSONValue {
        let members = entries.map { ($0.name, JSONValue.number(Double($0.version))) }
        return .object(JSONObject(Dictionary(uniqueKeysWithValues: members)))
    }

    /// `Carousel:2,Text:1`: the `components` query parameter.
    var text: String { entries.map { "\($0.name):\($0.version)" }.joined(separator: ",") }

    /// A profile's `components` object as a LIST (`Carousel:2,Text:1`, what `app components set`
    /// takes back; names in the hub's order), or `none` when empty.
    static func describe(_ components: JSONValue?) -> String {
        let members = components?.objectValue ?? JSONObject()
        guard !members.isEmpty else { return "none" }
        return members.map { "\($0.key):\($0.value.intValue.map(String.init) ?? JSONWriter.string($0.value))" }
            .joined(separator: ",")
    }
}
