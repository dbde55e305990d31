/// Bad input to a domain parser (a sync target, a cohort rule): a code and a sentence that names
/// the field at fault. The admin API answers it as a 400 (`AdminError.init(_:)`).
public struct InputError: Error, Equatable, Sendable {
    public var code: String
    public var message: String

    public init(_ code: String, _ message: String) {
        self.code = code
        self.message = message
    }
}
