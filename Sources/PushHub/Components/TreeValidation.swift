/// A violation found in a tree (or any JSON value): where (RFC 6901, in the published body) and
/// why, in one sentence that says what to fix.
public struct TreeViolation: Sendable, Equatable, CustomStringConvertible {
    /// "" for the root, "/children/1/items".
    public var pointer: String
    public var message: String

    public init(pointer: String, message: String) {
        self.pointer = pointer
        self.message = message
    }

    /// `{"pointer": …, "message": …}`, as the admin API lists it.
    public var json: JSONValue { .object(["pointer": .string(pointer), "message": .string(message)]) }

    public var description: String { "\(pointer.isEmpty ? "(root)" : pointer): \(message)" }
}

/// Where a walk over a JSON value is: the tokens below `base`, pushed and popped as it descends,
/// and written out as an RFC 6901 pointer only when a violation is found there (a walk over a
/// valid tree builds no string).
struct ViolationPath {
    enum Token {
        case name(String)
        case index(Int)
    }

    /// Already escaped.
    let base: String
    private var tokens: [Token] = []

    init(base: JSONPointer = JSONPointer()) {
        self.base = base.description
        tokens.reserveCapacity(32)
    }

    mutating func push(_ name: String) { tokens.append(.name(name)) }
    mutating func push(_ index: Int) { tokens.append(.index(index)) }
    mutating func pop() { tokens.removeLast() }

    var pointer: String {
        var text = base
        for token in tokens {
            switch token {
            case .name(let name): text += JSONPointer([name]).description
            case .index(let index): text += "/\(index)"
            }
        }
        return text
    }

    func violation(_ message: String) -> TreeViolation { TreeViolation(pointer: pointer, message: message) }
}

/// Where validation reports what it finds, as it descends into members and elements.
///
/// Invariant: once `isDone`, validation reports nothing more and returns; `enter` and `leave`
/// come in pairs.
protocol ViolationSink {
    /// No more violations are wanted (the limit is reached, or one is enough).
    var isDone: Bool { get }
    mutating func enter(_ name: String)
    mutating func enter(_ index: Int)
    mutating func leave()
    /// A violation where validation is; the message is only built if the sink keeps it.
    mutating func report(_ message: @autoclosure () -> String)
}

/// Only whether there is a violation: no path is kept and no message is built, so checking a
/// valid value allocates nothing.
struct FirstViolation: ViolationSink {
    private(set) var isDone = false

    mutating func enter(_ name: String) {}
    mutating func enter(_ index: Int) {}
    mutating func leave() {}
    mutating func report(_ message: @autoclosure () -> String) { isDone = true }
}

/// Every violation, with its pointer, up to `limit`.
struct ViolationList: ViolationSink {
    var path: ViolationPath
    private(set) var violations: [TreeViolation]
    let limit: Int

    init(base: JSONPointer = JSONPointer(), violations: [TreeViolation] = [], limit: Int) {
        path = ViolationPath(base: base)
        self.violations = violations
        self.limit = limit
    }

    var isDone: Bool { violations.count >= limit }

    mutating func enter(_ name: String) { path.push(name) }
    mutating func enter(_ index: Int) { path.push(index) }
    mutating func leave() { path.pop() }
    mutating func report(_ message: @autoclosure () -> String) {
        guard !isDone else { return }
        violations.append(path.violation(message()))
    }
}

/// Every violation of a tree against the component registry (DESIGN §16).
///
/// Every object and array of the tree is visited, `fallback`s included. A node (an object whose
/// `"type"` is a string) of a registered component is judged: its `"v"` (default 1) must be a
/// positive integer naming a registered version, and the node without its hub keys must match
/// that version's schema. With `strict`, a node of an unregistered type is a violation too.
/// Types are compared scalar by scalar (`"K"` with U+212A KELVIN SIGN is not `"K"`).
public enum TreeValidation {
    /// Members of a node that belong to the hub, not to its component's data: removed (here:
    /// skipped) before the node is validated.
    public static let hubKeys = ["type", "v", "fallback", "min_app_version"]

    public static func isHubKey(_ name: String) -> Bool {
        // The four names are ASCII and 1, 4, 8 and 15 bytes long: most names are ruled out by length.
        switch name.utf8.count {
        case 1: name.isScalarEqual(to: "v")
        case 4: name.isScalarEqual(to: "type")
        case 8: name.isScalarEqual(to: "fallback")
        case 15: name.isScalarEqual(to: "min_app_version")
        default: false
        }
    }

    /// Every violation (up to `limit`) of `tree`'s nodes of registered components, and with
    /// `strict` every node of an unregistered type, in document order: a node's own violations
    /// (at its pointer and inside it), then those of the nodes inside it, members in canonical
    /// order.
    public static func violations(
        in tree: JSONValue, components: [String: Component], strict: Bool, limit: Int
    ) -> [TreeViolation] {
        guard limit > 0, strict || !components.isEmpty else { return [] }
        var walk = Walk(components: components, strict: strict, list: ViolationList(limit: limit))
        walk.visit(tree)
        return walk.list.violations
    }

    private struct Walk {
        let components: [String: Component]
        let strict: Bool
        var list: ViolationList

        mutating func visit(_ value: JSONValue) {
            switch value {
            case .object(let members):
                // One pass for both members (a lookup of the absent "v" would search twice).
                var type: String?
                var version: JSONValue?
                let all = members.members
                for i in all.indices {
                    switch all[i].key.utf8.count {
                    case 4 where all[i].key.isScalarEqual(to: "type"): type = all[i].value.stringValue
                    case 1 where all[i].key.isScalarEqual(to: "v"): version = all[i].value
                    default: break
                    }
                }
                if let type { judge(value, type: type, version: version) }
                for i in all.indices where all[i].value.isContainer {
                    guard !list.isDone else { return }
                    list.enter(all[i].key)
                    visit(all[i].value)
                    list.leave()
                }
            case .array(let elements):
                for index in elements.indices where elements[index].isContainer {
                    guard !list.isDone else { return }
                    list.enter(index)
                    visit(elements[index])
                    list.leave()
                }
            case .null, .bool, .number, .string:
                break
            }
        }

        private mutating func judge(_ node: JSONValue, type: String, version: JSONValue?) {
            guard !list.isDone else { return }
            guard let component = components[type], component.name.isScalarEqual(to: type) else {
                if strict {
                    list.report(
                        "\(JSONWriter.string(.string(type))) is not a registered component: register it or use a registered type (this hub runs with --strict-components)"
                    )
                }
                return
            }
            var number = 1  // no "v": version 1
            if let version {
                guard let given = version.intValue, given >= 1 else {
                    list.report(
                        "\"v\" must be a positive integer (the version of \(type) the node needs), not \(ComponentSchema.Compiled.describe(version))"
                    )
                    return
                }
                number = given
            }
            guard let schema = component.versions[number] else {
                let registered = component.sortedVersions.map(String.init).joined(separator: ", ")
                list.report("\(type) has no version \(number) (registered: \(registered))")
                return
            }
            // Most nodes are valid: check without pointers or messages first.
            if !schema.admitsNode(node) { schema.validateNode(node, into: &list) }
        }
    }
}
