/// RFC 7386 JSON Merge Patch: objects merge member by member, `null` removes, anything else
/// replaces.
public enum MergePatch {
    public static func apply(_ patch: JSONValue, to target: JSONValue) -> JSONValue {
        guard case .object(let changes) = patch else { return patch }
        var result: JSONObject
        if case .object(let members) = target { result = members } else { result = JSONObject() }
        for (key, change) in changes {
            if change == .null {
                result[key] = nil
            } else {
                result[key] = apply(change, to: result[key] ?? .null)
            }
        }
        return .object(result)
    }
}
