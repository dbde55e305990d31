/// The rules for components as trees and clients name them (DESIGN §16), shared by the hub and
/// its Swift client: a node's `"type"`, a declaration's keys and the registry's names.
public enum ComponentName {
    /// Versions a component, a node's `"v"` or a declared capability may name.
    public static let versions = 1...1000
    /// The most components one declaration (a hello, an app profile) may name.
    public static let maxDeclared = 1000

    /// Whether `name` is 1–100 of `A-Z a-z 0-9 . _ -` (case matters: a node's `"type"` must match
    /// it exactly).
    public static func isValid(_ name: String) -> Bool {
        (1...100).contains(name.utf8.count)
            && name.utf8.allSatisfy { byte in
                (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
                    || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                    || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: ".")
                    || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
            }
    }
}
