/// An admin request's JSON body: not JSON is a 400 `bad_json` giving the byte offset; where a
/// route takes an object, anything else is a 400 `bad_request`, and a member it does not know a
/// 400 `unknown_field` naming it (DESIGN §14).
enum AdminBody {
    static func json(_ body: [UInt8]) throws(AdminError) -> JSONValue {
        do {
            return try JSONReader.parse(body)
        } catch {
            throw AdminError.badJSON(error)
        }
    }

    /// An object whose members are all in `known`; `shape` says what to send when it is not one.
    static func object(_ body: [UInt8], known: [String], shape: String = "a JSON object") throws(AdminError)
        -> JSONValue
    {
        let json = try json(body)
        guard case .object(let members) = json else { throw AdminError(400, "bad_request", "the body must be \(shape)") }
        try AdminError.mapping { () throws(InputError) in try members.refuseUnknownFields(known: known, at: "") }
        return json
    }
}
