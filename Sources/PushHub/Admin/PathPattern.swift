/// The path of an admin route: literal text with at most one variable, written
/// `/v1/screens/{name:screen}/history` — `name` is what the docs call it, `screen` its
/// `PathVariable` (what it may hold and how it is checked).
///
/// Invariants: `prefix` starts with `/`; without a variable, `suffix` is empty and the pattern
/// matches exactly `prefix`; with one, it matches `prefix`, the variable's value (possibly empty;
/// one path segment unless the variable spans segments), then `suffix`.
struct PathPattern: Equatable, Sendable, CustomStringConvertible {
    let prefix: String
    /// The variable's name as the docs show it (`name` in `{name:screen}`); nil without one.
    let variableName: String?
    let variable: PathVariable?
    let suffix: String

    init(_ text: String) {
        guard let open = text.firstIndex(of: "{") else {
            precondition(text.hasPrefix("/") && !text.contains("}"), "a path pattern starts with / (\(text))")
            (prefix, variableName, variable, suffix) = (text, nil, nil, "")
            return
        }
        guard let close = text[open...].firstIndex(of: "}"),
            case let parts = text[text.index(after: open)..<close].split(separator: ":"), parts.count == 2,
            let variable = PathVariable(rawValue: String(parts[1]))
        else { preconditionFailure("a path pattern's variable is {name:kind}, kind a PathVariable (\(text))") }
        prefix = String(text[..<open])
        variableName = String(parts[0])
        self.variable = variable
        suffix = String(text[text.index(after: close)...])
        precondition(
            prefix.hasPrefix("/") && !suffix.contains("{"), "a path pattern has at most one variable (\(text))")
    }

    /// The variable's value when `path` matches ("" for a pattern without one); nil when it does not.
    func match(_ path: Substring) -> String? {
        guard let variable else { return path == prefix ? "" : nil }
        guard path.hasPrefix(prefix) else { return nil }
        let rest = path.dropFirst(prefix.count)
        let text = variable.isPercentEncoded ? RequestHead.percentDecoded(rest) : String(rest)
        guard text.hasSuffix(suffix) else { return nil }
        let value = String(text.dropLast(suffix.count))
        return variable.spansSegments || !value.contains("/") ? value : nil
    }

    /// How much of a path the pattern fixes: of two patterns that match a path, the one that fixes
    /// more is meant (`/v1/screens/{name}/history` over `/v1/screens/{name}`).
    var literalLength: Int { prefix.utf8.count + suffix.utf8.count }

    /// As the docs show it: `/v1/screens/{name}/history`.
    var description: String { variableName.map { "\(prefix){\($0)}\(suffix)" } ?? prefix }
}

/// What a path variable holds: how it is read from the path and the 422 a value it may not be
/// gets (before the handler runs). A value may be empty (`/v1/screens/` names the screen "",
/// which is a 422; `/v1/syncs/` the sync "", a 404).
enum PathVariable: String, Sendable {
    /// A screen name (`ScreenName`): it may contain `/` and be sent percent-encoded, so
    /// `/v1/screens/home%2Fhistory` is the history of `home` (the suffix is matched after decoding).
    case screen
    /// A cohort name: the rest of the path, so `/v1/cohorts/a/b` is the cohort `a/b`, a 422.
    case cohort
    /// An experiment key: one path segment, so `/v1/experiments/k/other` is no route (404).
    case experiment
    /// A token's name: the rest of the path, not checked (revoking one that does not exist is a 404).
    case token
    /// A sync's id: the rest of the path, not checked (one that is unknown or expired is a 404).
    case sync
    /// A console file: a key among the embedded files, never a path on disk; may contain `/`.
    case consoleFile = "console"

    /// Whether the value may contain `/` (else it is one path segment).
    var spansSegments: Bool { self != .experiment }

    var isPercentEncoded: Bool { self == .screen }

    /// The 422 for a value this variable may not hold; nil when it may.
    func refusal(of value: String) -> AdminError? {
        switch self {
        case .screen: ScreenName.validationError(value).map { AdminError(422, "invalid_screen_name", $0) }
        case .cohort: CohortRoutes.validationError(value).map { AdminError(422, "invalid_cohort_name", $0) }
        case .experiment: ExperimentRoutes.validationError(value).map { AdminError(422, "invalid_experiment_key", $0) }
        case .token, .sync, .consoleFile: nil
        }
    }
}
