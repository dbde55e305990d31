/// A variant patch (docs/assignment.md, "Variant patches"): an RFC 7386 merge patch plus two marks,
/// so a variant can change one keyed child (an array element with a string `"id"`) without
/// restating its array, and later base changes to the other children still reach the variant.
///
/// - In an object patch a member name is a key the base has; `"+name"` adds `name` (the value is
///   the new value as written, taken literally); `null` deletes.
/// - Where the base value is an array, a *selector object* (non-empty, every member named `"#id"`
///   or `"+#id"`) merge-patches the child with that id (`null` removes it) or appends a new child
///   (`"+#id"`, the value is the whole child, its `"id"` set to `id`), in member-name order.
/// - Applying to a later base never fails: `#id` no longer there is skipped, `+#id` that exists is
///   merged into it, a plain key the base lacks is added (RFC 7386), `+key` that exists is
///   replaced, a selector object whose base is neither an array nor an object is skipped.
///
/// Invariants: a patch without marks (no member name starting with `+`, no selector object)
/// applies exactly as `MergePatch.apply`; marks are read on Unicode scalars (`+` then U+0301 is
/// still the mark); ids compare scalar by scalar; a duplicated id selects its first child.
/// Limitation: a base key whose name starts with `+` can be added or replaced (`"++x"` adds
/// `"+x"`) but not merged into or removed.
public enum KeyedMergePatch {
    /// Something a patch names that the base it is checked against does not fit.
    public struct Problem: Equatable, Sendable {
        /// Where in the patch, as an RFC 6901 pointer over the patch's member names as written
        /// (`/children/#cta/txt`), `~` and `/` escaped.
        public var path: String
        /// One sentence that says what is wrong and how to write it instead.
        public var message: String

        public init(path: String, message: String) {
            self.path = path
            self.message = message
        }
    }

    public static func apply(_ patch: JSONValue, to base: JSONValue) -> JSONValue {
        apply(patch, toOptional: base) ?? .null
    }

    /// Every problem of `patch` against `base`, in patch order (members by name, depth first).
    /// Empty means every plain key and `#id` the patch names is there and no addition exists yet.
    public static func problems(in patch: JSONValue, against base: JSONValue) -> [Problem] {
        var found: [Problem] = []
        check(patch, against: base, at: JSONPointer(), into: &found)
        return found
    }

    // MARK: Applying

    /// `nil` in and out stands for an absent member: a skipped selector object leaves it absent.
    private static func apply(_ patch: JSONValue, toOptional base: JSONValue?) -> JSONValue? {
        guard case .object(let changes) = patch else { return patch }
        if isSelectorObject(changes) {
            switch base {
            case .array(let elements)?: return .array(applySelectors(changes, to: elements))
            case .object?: break  // `#x` names keys of the object: read below as plain keys
            case .null?, .bool?, .number?, .string?, nil: return base
            }
        }
        var result = base?.objectValue ?? JSONObject()
        for (name, change) in changes {
            if let key = name.droppingMark("+") {
                result[key] = change == .null ? nil : change
            } else {
                result[name] = change == .null ? nil : apply(change, toOptional: result[name])
            }
        }
        return .object(result)
    }

    private static func applySelectors(_ changes: JSONObject, to base: [JSONValue]) -> [JSONValue] {
        var elements = base
        for (name, change) in changes {
            guard let (id, isAddition) = selector(name) else { continue }
            if let index = elements.firstIndex(where: { hasID(id, $0) }) {
                if change == .null {
                    elements.remove(at: index)
                } else {
                    elements[index] = apply(change, to: elements[index])
                }
            } else if isAddition, case .object(var child) = change {
                child["id"] = .string(id)
                elements.append(.object(child))
            }
        }
        return elements
    }

    // MARK: Checking

    private static func check(
        _ patch: JSONValue, against base: JSONValue, at path: JSONPointer, into found: inout [Problem]
    ) {
        guard case .object(let changes) = patch else { return }  // anything else replaces: nothing to name
        if isSelectorObject(changes) {
            switch base {
            case .array(let elements):
                return checkSelectors(changes, against: elements, at: path, into: &found)
            case .object: break
            case .null, .bool, .number, .string:
                let message = "\"#id\" members select children of an array of objects with ids; "
                return found.report(path, message + "the base value here is \(described(base.typeName))")
            }
        }
        let members = base.objectValue
        for (name, change) in changes {
            let here = path.appending(name)
            if let key = name.droppingMark("+") {
                if members?[key] != nil {
                    found.report(
                        here, "\(quoted(name)) adds a key the base already has; write \(quoted(key)) to change it")
                } else if change == .null {
                    found.report(here, "\(quoted(name)): null adds nothing; give the new value")
                }
            } else if let value = members?[name] {
                check(change, against: value, at: here, into: &found)
            } else {
                found.report(here, missingKey(name, deleting: change == .null, in: base))
            }
        }
    }

    private static func missingKey(_ name: String, deleting: Bool, in base: JSONValue) -> String {
        var message: String
        switch base {
        case .object: message = "the base has no key \(quoted(name))\(deleting ? "" : " here")"
        case .null, .bool, .number, .string, .array:
            message = "the base value here is \(described(base.typeName)), not an object, "
            message += "so it has no key \(quoted(name))"
        }
        message += deleting ? " to remove" : "; write \(quoted("+" + name)) to add it"
        if name.unicodeScalars.first == "#" {
            let hint =
                if case .array = base {
                    " (a selector object holds only \"#id\" and \"+#id\" members)"
                } else {
                    " (\"#id\" selects a child only in an array of objects with ids)"
                }
            message += hint
        }
        return message
    }

    private static func checkSelectors(
        _ changes: JSONObject, against elements: [JSONValue], at path: JSONPointer, into found: inout [Problem]
    ) {
        for (name, change) in changes {
            guard let (id, isAddition) = selector(name) else { continue }
            let here = path.appending(name)
            let matches = elements.filter { hasID(id, $0) }
            if isAddition {
                if !matches.isEmpty {
                    let message = "\(quoted(name)) adds a child with id \(quoted(id)) but the array already has one; "
                    found.report(here, message + "write \(quoted("#" + id)) to change it")
                } else if case .object(let child) = change {
                    if let given = child["id"], !(given.stringValue?.isScalarEqual(to: id) ?? false) {
                        let message = "the new child's \"id\" is \(JSONWriter.string(given)), not \(quoted(id)); "
                        found.report(here, message + "leave it out or make them equal")
                    }
                } else {
                    found.report(here, "a new child must be an object; this is \(described(change.typeName))")
                }
                continue
            }
            guard let first = matches.first else {
                let keyless = !elements.contains { $0["id"]?.stringValue != nil }
                let message = "no child with id \(quoted(id)) in this array"
                let because = keyless ? " (its elements have no string \"id\")" : ""
                found.report(here, message + because + "; write \(quoted("+#" + id)) to add one")
                continue
            }
            if matches.count > 1 {
                let message = "the base array has \(matches.count) children with id \(quoted(id)); "
                found.report(here, message + "\(quoted(name)) changes only the first")
            }
            check(change, against: first, at: here, into: &found)
        }
    }

    // MARK: Marks

    /// A non-empty object whose every member name is `#id` or `+#id`.
    private static func isSelectorObject(_ changes: JSONObject) -> Bool {
        !changes.isEmpty && changes.keys.allSatisfy { selector($0) != nil }
    }

    /// `#id` → (id, false); `+#id` → (id, true); any other name → nil.
    private static func selector(_ name: String) -> (id: String, isAddition: Bool)? {
        if let id = name.droppingMark("#") { return (id, false) }
        if let rest = name.droppingMark("+"), let id = rest.droppingMark("#") { return (id, true) }
        return nil
    }

    private static func hasID(_ id: String, _ element: JSONValue) -> Bool {
        element["id"]?.stringValue?.isScalarEqual(to: id) ?? false
    }

    private static func quoted(_ text: String) -> String { JSONWriter.string(.string(text)) }
    /// "a string", "an object".
    private static func described(_ typeName: String) -> String {
        ("aeiou".contains(typeName.first ?? "x") ? "an " : "a ") + typeName
    }
}

extension [KeyedMergePatch.Problem] {
    fileprivate mutating func report(_ path: JSONPointer, _ message: String) {
        append(KeyedMergePatch.Problem(path: path.description, message: message))
    }
}

extension String {
    /// The name without its leading `mark` scalar, or nil when it does not start with it.
    fileprivate func droppingMark(_ mark: Unicode.Scalar) -> String? {
        guard unicodeScalars.first == mark else { return nil }
        return String(unicodeScalars.dropFirst())
    }
}
