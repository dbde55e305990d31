/// An RFC 6902 JSON Patch: a list of operations, applied in order.
///
/// Invariant: `apply` is all-or-nothing: it returns the patched document or throws, never a
/// half-patched one (it works on a copy).
public struct JSONPatch: Equatable, Sendable {
    /// One RFC 6902 operation (§4.1–§4.6).
    public enum Operation: Equatable, Sendable {
        case add(JSONPointer, JSONValue)
        case remove(JSONPointer)
        case replace(JSONPointer, JSONValue)
        case move(from: JSONPointer, to: JSONPointer)
        case copy(from: JSONPointer, to: JSONPointer)
        case test(JSONPointer, JSONValue)
    }

    /// Why a patch did not apply: the index of the operation and what was wrong with it.
    public struct ApplyError: Error, Equatable, Sendable, CustomStringConvertible {
        public var operation: Int
        public var message: String
        public var description: String { "patch operation \(operation): \(message)" }
    }

    public var operations: [Operation]

    public init(_ operations: [Operation] = []) { self.operations = operations }

    // MARK: - JSON form

    public var json: JSONValue {
        .array(
            operations.map { operation in
                switch operation {
                case .add(let path, let value):
                    .object(["op": .string("add"), "path": .string(path.description), "value": value])
                case .remove(let path): .object(["op": .string("remove"), "path": .string(path.description)])
                case .replace(let path, let value):
                    .object(["op": .string("replace"), "path": .string(path.description), "value": value])
                case .move(let from, let to):
                    .object(["op": .string("move"), "from": .string(from.description), "path": .string(to.description)])
                case .copy(let from, let to):
                    .object(["op": .string("copy"), "from": .string(from.description), "path": .string(to.description)])
                case .test(let path, let value):
                    .object(["op": .string("test"), "path": .string(path.description), "value": value])
                }
            })
    }

    /// Reads a patch document; errors name the operation index and the field at fault.
    public init(json: JSONValue) throws(ApplyError) {
        guard case .array(let elements) = json else {
            throw ApplyError(operation: 0, message: "a patch is a JSON array")
        }
        var operations: [Operation] = []
        for (i, element) in elements.enumerated() {
            func pointer(_ field: String) throws(ApplyError) -> JSONPointer {
                guard let text = element[field]?.stringValue, let pointer = JSONPointer(parsing: text) else {
                    throw ApplyError(operation: i, message: "'\(field)' must be a JSON Pointer string")
                }
                return pointer
            }
            func value() throws(ApplyError) -> JSONValue {
                guard let value = element["value"] else {
                    throw ApplyError(operation: i, message: "'value' is missing")
                }
                return value
            }
            switch element["op"]?.stringValue {
            case "add": operations.append(.add(try pointer("path"), try value()))
            case "remove": operations.append(.remove(try pointer("path")))
            case "replace": operations.append(.replace(try pointer("path"), try value()))
            case "move": operations.append(.move(from: try pointer("from"), to: try pointer("path")))
            case "copy": operations.append(.copy(from: try pointer("from"), to: try pointer("path")))
            case "test": operations.append(.test(try pointer("path"), try value()))
            default: throw ApplyError(operation: i, message: "'op' must be add, remove, replace, move, copy or test")
            }
        }
        self.operations = operations
    }

    // MARK: - Applying (RFC 6902 §4)

    public func apply(to document: JSONValue) throws(ApplyError) -> JSONValue {
        var result = document
        for (i, operation) in operations.enumerated() {
            do throws(PathError) {
                switch operation {
                case .add(let path, let value): try Self.add(value, at: path.tokens[...], in: &result)
                case .remove(let path): _ = try Self.remove(at: path.tokens[...], in: &result)
                case .replace(let path, let value):
                    _ = try Self.remove(at: path.tokens[...], in: &result, replacingWith: value)
                case .move(let from, let to):
                    if from == to {  // moves nothing, but §4.4 still wants `from` to exist
                        _ = try Self.value(at: from.tokens[...], in: result)
                        continue
                    }
                    guard !from.isProperPrefix(of: to) else {
                        throw PathError("cannot move a value into itself")
                    }
                    let value = try Self.remove(at: from.tokens[...], in: &result)
                    try Self.add(value, at: to.tokens[...], in: &result)
                case .copy(let from, let to):
                    try Self.add(try Self.value(at: from.tokens[...], in: result), at: to.tokens[...], in: &result)
                case .test(let path, let expected):
                    guard try Self.value(at: path.tokens[...], in: result) == expected else {
                        throw PathError("test failed at \(path)")
                    }
                }
            } catch {
                throw ApplyError(operation: i, message: error.message)
            }
        }
        return result
    }

    struct PathError: Error {
        var message: String
        init(_ message: String) { self.message = message }
    }

    static func index(_ token: String, count: Int, allowEnd: Bool) throws(PathError) -> Int {
        if allowEnd && token == "-" { return count }
        guard let index = Int(token), index >= 0, String(index) == token else {
            throw PathError("'\(token)' is not an array index")
        }
        guard index < count || (allowEnd && index == count) else {
            throw PathError("index \(index) is out of range (\(count) elements)")
        }
        return index
    }

    static func value(at path: ArraySlice<String>, in document: JSONValue) throws(PathError) -> JSONValue {
        guard let token = path.first else { return document }
        switch document {
        case .object(let members):
            guard let member = members[token] else { throw PathError("no member '\(token)'") }
            return try value(at: path.dropFirst(), in: member)
        case .array(let elements):
            return try value(
                at: path.dropFirst(), in: elements[try index(token, count: elements.count, allowEnd: false)])
        default:
            throw PathError("cannot descend into a \(document.typeName) at '\(token)'")
        }
    }

    static func add(_ value: JSONValue, at path: ArraySlice<String>, in document: inout JSONValue) throws(PathError) {
        guard let token = path.first else {
            document = value
            return
        }
        let last = path.count == 1
        switch document {
        case .object(var members):
            document = .null  // keep `members` uniquely referenced while it changes
            defer { document = .object(members) }
            if last {
                members[token] = value
            } else {
                guard var child = members[token] else { throw PathError("no member '\(token)'") }
                members[token] = nil
                defer { members[token] = child }
                try add(value, at: path.dropFirst(), in: &child)
            }
        case .array(var elements):
            document = .null
            defer { document = .array(elements) }
            if last {
                elements.insert(value, at: try index(token, count: elements.count, allowEnd: true))
            } else {
                let i = try index(token, count: elements.count, allowEnd: false)
                try add(value, at: path.dropFirst(), in: &elements[i])
            }
        default:
            throw PathError("cannot add into a \(document.typeName) at '\(token)'")
        }
    }

    /// Removes (or, with `replacement`, replaces) the value at `path`, which must exist.
    static func remove(
        at path: ArraySlice<String>, in document: inout JSONValue, replacingWith replacement: JSONValue? = nil
    )
        throws(PathError) -> JSONValue
    {
        guard let token = path.first else {
            guard let replacement else { throw PathError("cannot remove the whole document") }
            defer { document = replacement }
            return document
        }
        let last = path.count == 1
        switch document {
        case .object(var members):
            document = .null
            defer { document = .object(members) }
            guard var child = members[token] else { throw PathError("no member '\(token)'") }
            if last {
                members[token] = replacement
                return child
            }
            members[token] = nil
            defer { members[token] = child }
            return try remove(at: path.dropFirst(), in: &child, replacingWith: replacement)
        case .array(var elements):
            document = .null
            defer { document = .array(elements) }
            let i = try index(token, count: elements.count, allowEnd: false)
            if last {
                let old = elements[i]
                if let replacement { elements[i] = replacement } else { elements.remove(at: i) }
                return old
            }
            return try remove(at: path.dropFirst(), in: &elements[i], replacingWith: replacement)
        default:
            throw PathError("cannot descend into a \(document.typeName) at '\(token)'")
        }
    }
}
