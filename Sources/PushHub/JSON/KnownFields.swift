extension JSONObject {
    /// Refuses a member whose name is not in `known` (DESIGN §14: a typo in a target or a rule
    /// must never widen it — `platfrom` used to be ignored, and the sync reached every platform).
    /// `path` names the object in messages (`target`, `rule`, `variants[2]`, or "" for the body).
    func refuseUnknownFields(known: [String], at path: String) throws(InputError) {
        for key in keys where !known.contains(key) {
            let field = path.isEmpty ? key : "\(path).\(key)"
            let hint = NearestName.suggest(key, among: known).map { " (did you mean \"\($0)\"?)" } ?? ""
            let object = path.isEmpty ? "the body" : "\"\(path)\""
            throw InputError(
                "unknown_field",
                "\"\(field)\" is not a field of \(object)\(hint); known fields: \(known.joined(separator: ", "))")
        }
    }
}
