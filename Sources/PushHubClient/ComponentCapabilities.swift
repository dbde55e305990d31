import ScreenTree

/// What a build can render (DESIGN §16): component name → the highest version of it the app
/// renders, declared in every `hello` as `components` and by `fetchScreen` as its `components`
/// query parameter (`PushHubClient.Options.components`). The Swift twin of
/// clients/js/src/component-capabilities.js.
///
/// A declarable list has at most `maxComponents` names, each 1–100 of `A-Z a-z 0-9 . _ -` (case
/// matters: it is the node's `"type"`), each with a version in `versions`; `[:]` declares that the
/// build renders no registered component.
public enum ComponentCapabilities {
    /// The most components a hello may declare.
    public static let maxComponents = ComponentName.maxDeclared
    /// The versions a client may declare.
    public static let versions = ComponentName.versions

    /// Why `components` cannot be declared (one sentence naming the first bad entry, in name
    /// order), or nil when it can.
    public static func problem(in components: [String: Int]) -> String? {
        if components.count > maxComponents { return "\(components.count) components, at most \(maxComponents)" }
        for (name, version) in components.sorted(by: { $0.key < $1.key }) {
            guard isName(name) else { return "\"\(name)\" is not a component name (1–100 of A–Z a–z 0–9 . _ -)" }
            guard versions.contains(version) else {
                return "\(name) is \(version), not an integer from 1 to \(versions.upperBound)"
            }
        }
        return nil
    }

    /// `hello.components`: `{"Carousel":2,"Text":1}`.
    static func json(_ components: [String: Int]) -> JSONValue {
        .object(JSONObject(components.mapValues { .number(Double($0)) }))
    }

    /// An HTTP fetch's `components` query parameter: `Carousel:2,Text:1`, names in order (`""` for `[:]`).
    static func query(_ components: [String: Int]) -> String {
        components.sorted { $0.key < $1.key }.map { "\($0.key):\($0.value)" }.joined(separator: ",")
    }

    /// Whether `name` is a component name (`ComponentName.isValid`, the hub's rule).
    public static func isName(_ name: String) -> Bool { ComponentName.isValid(name) }
}
