/// A screen's name (DESIGN §4): `[a-z0-9._/-]{1,200}`. The admin API reserves the last
/// segments `history`, `rollback`, `diff` and `releases` for its sub-resources, and `releases`
/// as any later segment (`/v1/screens/{name}/releases/{id}/…` must read one way only).
public enum ScreenName {
    static let reservedSuffixes = ["/history", "/rollback", "/diff", "/releases"]

    public static func validationError(_ name: String) -> String? {
        guard (1...200).contains(name.utf8.count) else {
            return "a screen name has 1 to 200 characters, not \(name.utf8.count)"
        }
        let allowed = name.utf8.allSatisfy { byte in
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "/")
                || byte == UInt8(ascii: "-")
        }
        guard allowed else { return "a screen name uses only a-z 0-9 . _ / - (got \"\(name)\")" }
        if let reserved = reservedSuffixes.first(where: { name.hasSuffix($0) }) {
            return "a screen name may not end in \(reserved): "
                + "/history, /rollback, /diff and /releases are admin API sub-resources"
        }
        if name.contains("/releases/") {
            return "a screen name may not contain /releases/ (the admin API's path of a screen's releases)"
        }
        return nil
    }
}
