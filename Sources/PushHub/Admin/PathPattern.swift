/// The path of an admin route: literal text with variables, written
/// `/v1/screens/{name:screen}/history` — `name` is what the docs call it, `screen` its
/// `PathVariable` (what it may hold and how it is checked). After the first variable, later ones
/// (`/v1/screens/{name:screen}/releases/{id:release}/halt`) are one path segment each, each after
/// a literal part of its own.
///
/// Invariants: `prefix` starts with `/`; without a variable, `suffix` is empty and the pattern
/// matches exactly `prefix`; with some, it matches `prefix`, the first variable's value (possibly
/// empty; one path segment unless the variable spans segments), each later variable's literal and
/// one-segment value, then `suffix`. A later variable is found at the last occurrence of its
/// literal, so the first variable's value must not hold a later literal (`ScreenName` reserves
/// `/releases/`).
struct PathPattern: Equatable, Sendable, CustomStringConvertible {
    /// A variable after the first, with the literal text before it.
    struct LaterVariable: Equatable, Sendable {
        let literal: String
        let name: String
        let variable: PathVariable
    }

    let prefix: String
    /// The first variable's name as the docs show it (`name` in `{name:screen}`); nil without one.
    let variableName: String?
    let variable: PathVariable?
    let later: [LaterVariable]
    let suffix: String

    init(_ text: String) {
        guard let open = text.firstIndex(of: "{") else {
            precondition(text.hasPrefix("/") && !text.contains("}"), "a path pattern starts with / (\(text))")
            (prefix, variableName, variable, later, suffix) = (text, nil, nil, [], "")
            return
        }
        prefix = String(text[..<open])
        precondition(prefix.hasPrefix("/"), "a path pattern starts with / (\(text))")
        var variables: [(literal: String, name: String, variable: PathVariable)] = []
        var rest = text[open...]
        var literal = ""
        while let start = rest.firstIndex(of: "{") {
            literal += rest[..<start]
            guard let close = rest[start...].firstIndex(of: "}"),
                case let parts = rest[rest.index(after: start)..<close].split(separator: ":"), parts.count == 2,
                let variable = PathVariable(rawValue: String(parts[1]))
            else { preconditionFailure("a path pattern's variable is {name:kind}, kind a PathVariable (\(text))") }
            variables.append((literal, String(parts[0]), variable))
            literal = ""
            rest = rest[rest.index(after: close)...]
        }
        suffix = String(rest)
        variableName = variables[0].name
        variable = variables[0].variable
        later = variables.dropFirst().map { LaterVariable(literal: $0.literal, name: $0.name, variable: $0.variable) }
        precondition(
            later.allSatisfy { !$0.literal.isEmpty && !$0.variable.spansSegments },
            "a later path variable is one segment after literal text (\(text))")
    }

    /// The first variable's value when `path` matches ("" for a pattern without one); nil when it does not.
    func match(_ path: Substring) -> String? { values(path).map { $0.first ?? "" } }

    /// Every variable's value, in order, when `path` matches ([] for a pattern without one).
    func values(_ path: Substring) -> [String]? {
        guard let variable else { return path == prefix ? [] : nil }
        guard path.hasPrefix(prefix) else { return nil }
        let rest = path.dropFirst(prefix.count)
        let text = variable.isPercentEncoded ? RequestHead.percentDecoded(rest) : String(rest)
        guard text.hasSuffix(suffix) else { return nil }
        var first = text.dropLast(suffix.count)
        var laterValues: [String] = []
        for part in later.reversed() {
            guard let found = first.ranges(of: part.literal).last else { return nil }
            let value = first[found.upperBound...]
            guard !value.contains("/") else { return nil }
            laterValues.insert(String(value), at: 0)
            first = first[..<found.lowerBound]
        }
        guard variable.spansSegments || !first.contains("/") else { return nil }
        return [String(first)] + laterValues
    }

    /// How much of a path the pattern fixes: of two patterns that match a path, the one that fixes
    /// more is meant (`/v1/screens/{name}/history` over `/v1/screens/{name}`).
    var literalLength: Int { prefix.utf8.count + later.reduce(0) { $0 + $1.literal.utf8.count } + suffix.utf8.count }

    /// As the docs show it: `/v1/screens/{name}/history`.
    var description: String {
        guard let variableName else { return prefix }
        return "\(prefix){\(variableName)}" + later.map { "\($0.literal){\($0.name)}" }.joined() + suffix
    }
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
    /// A release's id (`r-43`): one segment, not checked (an unknown one is a 404).
    case release
    /// A component name (`ComponentName`): one segment.
    case component
    /// A platform (`ios`): one segment, `[a-z0-9._-]{1,100}`.
    case platform
    /// An app version (`5.0.0`): one segment, a semantic version.
    case appVersion = "app_version"
    /// A webhook's name: one segment, `[a-z0-9._-]{1,100}`.
    case webhook

    /// Whether the value may contain `/` (else it is one path segment).
    var spansSegments: Bool {
        switch self {
        case .screen, .cohort, .token, .sync, .consoleFile: true
        case .experiment, .release, .component, .platform, .appVersion, .webhook: false
        }
    }

    var isPercentEncoded: Bool { self == .screen }

    /// The 422 for a value this variable may not hold; nil when it may.
    func refusal(of value: String) -> AdminError? {
        switch self {
        case .screen: ScreenName.validationError(value).map { AdminError(422, "invalid_screen_name", $0) }
        case .cohort: CohortRoutes.validationError(value).map { AdminError(422, "invalid_cohort_name", $0) }
        case .experiment: ExperimentRoutes.validationError(value).map { AdminError(422, "invalid_experiment_key", $0) }
        case .component:
            ComponentName.isValid(value)
                ? nil
                : AdminError(422, "invalid_component_name", "a component name is 1 to 100 of A-Z a-z 0-9 . _ - (got \"\(value)\")")
        case .platform: Identifier.validationError(value, kind: "a platform").map { AdminError(422, "invalid_platform", $0) }
        case .appVersion:
            SemanticVersion(value) == nil
                ? AdminError(422, "invalid_app_version", "\"\(value)\" is not a semantic version such as 5.0.0") : nil
        case .webhook: WebhookRoutes.validationError(value).map { AdminError(422, "invalid_webhook_name", $0) }
        case .token, .sync, .consoleFile, .release: nil
        }
    }
}
