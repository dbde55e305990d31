/// The components a client says it renders (`hello.components`, DESIGN §16), or an operator asks
/// for in a query (`?components=Carousel:2,Text:1`): component → the highest version it renders.
///
/// Invariants: immutable; names are 1–100 of `A-Z a-z 0-9 . _ -`, versions in `ComponentName.versions`,
/// at most `ComponentName.maxDeclared` of them. Sessions intern it (`RenditionCache`): one object per distinct set.
public final class DeclaredComponents: Hashable, Sendable {
    public let versions: [String: Int]
    /// Hashed once: a declaration is hashed per hello (interning, the capabilities memo).
    private let hashCode: Int

    public init(_ versions: [String: Int]) {
        self.versions = versions
        hashCode = versions.hashValue
    }

    /// From `hello.components`: an object of name → integer. The error names what is wrong.
    public convenience init(json: JSONValue) throws(InputError) {
        guard let members = json.objectValue else {
            throw InputError("bad_message", "\"components\" must be an object of component name → highest version")
        }
        guard members.count <= ComponentName.maxDeclared else {
            throw InputError(
                "bad_message", "\"components\" names \(members.count) components; at most \(ComponentName.maxDeclared)")
        }
        var versions: [String: Int] = [:]
        for (name, value) in members {
            try ComponentName.check(name, field: "components")
            guard let version = value.intValue, ComponentName.versions.contains(version) else {
                throw InputError(
                    "bad_message",
                    "components.\(name) must be an integer \(ComponentName.versions.lowerBound)…\(ComponentName.versions.upperBound) (the highest version rendered)"
                )
            }
            versions[name] = version
        }
        self.init(versions)
    }

    /// From a query value such as `Carousel:2,Text:1` (an empty value declares nothing).
    public convenience init(query text: String) throws(InputError) {
        var versions: [String: Int] = [:]
        for item in text.split(separator: ",", omittingEmptySubsequences: true) {
            let parts = item.split(separator: ":", omittingEmptySubsequences: false)
            guard parts.count == 2, let version = Int(parts[1]), ComponentName.versions.contains(version) else {
                throw InputError("bad_components", "components is a list such as Carousel:2,Text:1 (got \"\(item)\")")
            }
            try ComponentName.check(String(parts[0]), field: "components", code: "bad_components")
            versions[String(parts[0])] = version
        }
        guard versions.count <= ComponentName.maxDeclared else {
            throw InputError(
                "bad_components", "components names \(versions.count) components; at most \(ComponentName.maxDeclared)")
        }
        self.init(versions)
    }

    public var json: JSONValue { .object(JSONObject(versions.mapValues { .number(Double($0)) })) }

    public static func == (a: DeclaredComponents, b: DeclaredComponents) -> Bool {
        a === b || (a.hashCode == b.hashCode && a.versions == b.versions)
    }
    public func hash(into hasher: inout Hasher) { hasher.combine(hashCode) }
}

extension ComponentName {
    /// Refuses a name that is not `isValid`, naming `field`.
    static func check(_ name: String, field: String, code: String = "bad_message") throws(InputError) {
        guard isValid(name) else {
            throw InputError(code, "\(field): a component name is 1 to 100 of A-Z a-z 0-9 . _ - (got \"\(name)\")")
        }
    }
}
