/// Names of cohorts and experiment keys: `[a-z0-9._-]{1,100}` (screen names also allow `/`,
/// see `ScreenName`).
enum Identifier {
    /// nil when `name` is valid; else a sentence that says what is allowed, naming `kind`.
    static func validationError(_ name: String, kind: String) -> String? {
        let allowed = name.utf8.allSatisfy { byte in
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
        }
        return allowed && (1...100).contains(name.utf8.count)
            ? nil : "\(kind) is 1 to 100 of a-z 0-9 . _ - (got \"\(name)\")"
    }
}
