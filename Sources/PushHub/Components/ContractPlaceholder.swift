// TEMPORARY: the contract API of the schema helper's files (deleted when they merge).

public struct TreeViolation: Sendable, Equatable {
    public var pointer: String
    public var message: String
    public var json: JSONValue { .object(["pointer": .string(pointer), "message": .string(message)]) }
    public init(pointer: String, message: String) {
        self.pointer = pointer
        self.message = message
    }
}

public struct SchemaError: Error, Sendable, Equatable {
    public var pointer: String
    public var message: String
}

public struct ComponentSchema: Sendable, Equatable {
    public let json: JSONValue
    public init(json: JSONValue) throws(SchemaError) { self.json = json }
    public func validate(_ value: JSONValue, at pointer: JSONPointer, into violations: inout [TreeViolation], limit: Int) {
        guard let required = json["required"]?.arrayValue else { return }
        for name in required.compactMap(\.stringValue) where value[name] == nil && violations.count < limit {
            violations.append(TreeViolation(pointer: pointer.description, message: "missing required property \"\(name)\""))
        }
    }
}

public struct Component: Sendable, Equatable {
    public let name: String
    public let versions: [Int: ComponentSchema]
    public var sortedVersions: [Int] { versions.keys.sorted() }
    public init(name: String, body: JSONValue) throws(InputError) {
        self.name = name
        var versions: [Int: ComponentSchema] = [:]
        for (key, value) in body["versions"]?.objectValue ?? [:] {
            guard let number = Int(key) else { throw InputError("bad_component", "bad version \(key)") }
            do {
                versions[number] = try ComponentSchema(json: value["schema"] ?? .object([:]))
            } catch {
                throw InputError("bad_schema", error.message)
            }
        }
        guard !versions.isEmpty else { throw InputError("bad_component", "a component needs \"versions\"") }
        self.versions = versions
    }
    public var json: JSONValue {
        .object([
            "name": .string(name),
            "versions": .object(JSONObject(Dictionary(uniqueKeysWithValues: versions.map { (String($0.key), JSONValue.object(["schema": $0.value.json])) }))),
        ])
    }
}

enum TreeValidation {
    static func violations(in tree: JSONValue, components: [String: Component], strict: Bool, limit: Int) -> [TreeViolation] {
        var found: [TreeViolation] = []
        func walk(_ value: JSONValue, _ pointer: JSONPointer) {
            switch value {
            case .object(let members):
                if let type = members["type"]?.stringValue {
                    if let component = components[type] {
                        let version = members["v"].map { $0.intValue ?? 0 } ?? 1
                        if let schema = component.versions[version] {
                            schema.validate(value, at: pointer, into: &found, limit: limit)
                        } else if found.count < limit {
                            found.append(TreeViolation(pointer: pointer.description, message: "\(type) has no version \(version)"))
                        }
                    } else if strict, found.count < limit {
                        found.append(TreeViolation(pointer: pointer.description, message: "component \"\(type)\" is not registered"))
                    }
                }
                for (key, member) in members where member.isContainer { walk(member, pointer.appending(key)) }
            case .array(let elements):
                for (index, element) in elements.enumerated() where element.isContainer { walk(element, pointer.appending(index)) }
            default:
                break
            }
        }
        walk(tree, JSONPointer())
        return found
    }
}
