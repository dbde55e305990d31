/// A registered component (DESIGN §16): a node type an app renders, and the schema of each of
/// its versions. Registered with `PUT /v1/components/{name}` and the body
/// `{"versions":{"1":{"schema":{…}},"2":{"schema":{…}}}}`.
///
/// Invariants: `name` is 1 to 100 of `A-Z a-z 0-9 . _ -` (compared case-sensitively and scalar
/// by scalar, as node types are); `versions` is never empty and its keys are in
/// 1…`maxVersion`; a version registered without a schema holds the schema `true`, which every
/// node matches (and `json` answers it so).
public struct Component: Sendable, Equatable {
    public static let maxVersion = 1000

    public let name: String
    public let versions: [Int: ComponentSchema]

    public var sortedVersions: [Int] { versions.keys.sorted() }

    /// From a PUT body.
    /// - Throws: `InputError` with code `bad_component` for a bad name or body shape (the message
    ///   names the member at fault), or `bad_schema` for a schema that cannot be registered, with
    ///   the pointer into the body first in the message (`/versions/2/schema/properties/items/type: …`).
    public init(name: String, body: JSONValue) throws(InputError) {
        if let problem = Self.nameError(name) { throw InputError("bad_component", problem) }
        guard let members = body.objectValue else {
            throw InputError(
                "bad_component",
                "the body must be an object {\"versions\":{\"1\":{\"schema\":{…}}}}, not \(ComponentSchema.Compiled.phrase(body))"
            )
        }
        for (key, _) in members where key != "versions" {
            throw InputError(
                "bad_component",
                "unknown member \(JSONWriter.string(.string(key))) in the body; it holds only \"versions\"")
        }
        guard let listed = members["versions"] else {
            throw InputError(
                "bad_component", "the body has no \"versions\": list them as {\"versions\":{\"1\":{\"schema\":{…}}}}")
        }
        guard let entries = listed.objectValue else {
            throw InputError(
                "bad_component",
                "\"versions\" must be an object keyed by version (\"1\", \"2\", …), not \(ComponentSchema.Compiled.phrase(listed))"
            )
        }
        guard !entries.isEmpty else {
            throw InputError("bad_component", "\"versions\" lists no version; register at least \"1\"")
        }
        var versions: [Int: ComponentSchema] = [:]
        for (key, entry) in entries {
            guard let version = Self.version(fromKey: key) else {
                throw InputError(
                    "bad_component",
                    "version \(JSONWriter.string(.string(key))) is not a version number: use an integer from 1 to \(Self.maxVersion) without leading zeros"
                )
            }
            guard let fields = entry.objectValue else {
                throw InputError(
                    "bad_component",
                    "version \"\(key)\" must be an object {\"schema\":{…}}, not \(ComponentSchema.Compiled.phrase(entry))"
                )
            }
            for (field, _) in fields where field != "schema" {
                throw InputError(
                    "bad_component",
                    "unknown member \(JSONWriter.string(.string(field))) in version \"\(key)\"; a version holds only \"schema\""
                )
            }
            let schemaJSON = fields["schema"] ?? .bool(true)
            let at = JSONPointer(["versions", key, "schema"])
            do throws(SchemaError) {
                versions[version] = try ComponentSchema(json: schemaJSON)
            } catch {
                throw InputError("bad_schema", "\(at.description)\(error.pointer): \(error.message)")
            }
            if let required = schemaJSON["required"]?.arrayValue,
                let index = required.firstIndex(where: { $0.stringValue.map(TreeValidation.isHubKey) ?? false })
            {
                throw InputError(
                    "bad_schema",
                    "\(at.appending("required").appending(index).description): \(JSONWriter.string(required[index])) is a hub key (type, v, fallback, min_app_version), removed from a node before it is validated, so it cannot be required"
                )
            }
        }
        self.name = name
        self.versions = versions
    }

    /// `{"name":…,"versions":{"1":{"schema":…},…}}`.
    public var json: JSONValue {
        var listed = JSONObject()
        for (version, schema) in versions { listed[String(version)] = .object(["schema": schema.json]) }
        return .object(["name": .string(name), "versions": .object(listed)])
    }

    /// nil when `name` can name a component; else a sentence saying what is allowed.
    public static func nameError(_ name: String) -> String? {
        let allowed = name.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-"):
                true
            default:
                false
            }
        }
        return allowed && (1...100).contains(name.utf8.count)
            ? nil : "a component name is 1 to 100 of A-Z a-z 0-9 . _ - (got \(JSONWriter.string(.string(name))))"
    }

    /// The version a `versions` key names: "1" … "1000", without leading zeros or signs.
    public static func version(fromKey key: String) -> Int? {
        let digits = key.utf8
        guard (1...4).contains(digits.count), digits.first != UInt8(ascii: "0"),
            digits.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }), let value = Int(key),
            value <= maxVersion
        else { return nil }
        return value
    }
}
