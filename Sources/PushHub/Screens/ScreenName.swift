/// A screen's name (DESIGN §4): `[a-z0-9._/-]{1,200}`. The admin API reserves the last
/// segments `history` and `rollback` for its sub-resources.
public enum ScreenName {
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
        if name.hasSuffix("/history") || name.hasSuffix("/rollback") {
            return "a screen name may not end in /history or /rollback (admin API sub-resources)"
        }
        return nil
    }
}
