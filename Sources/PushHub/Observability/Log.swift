import Glibc
import Synchronization

/// JSON-lines logging on stderr: one object per line with `ts`, `level`, `msg` and fields.
///
/// Invariant: a line is written with one `write(2)`, so lines from several loops never interleave.
public enum Log {
    /// Severity, ordered; lines below the configured level are not even formatted.
    public enum Level: Int, Sendable, Comparable {
        case debug, info, warning, error
        public static func < (a: Level, b: Level) -> Bool { a.rawValue < b.rawValue }
        var name: String {
            switch self {
            case .debug: "debug"
            case .info: "info"
            case .warning: "warning"
            case .error: "error"
            }
        }
    }

    private static let minimum = Atomic<Int>(Level.info.rawValue)

    public static func setLevel(_ level: Level) { minimum.store(level.rawValue, ordering: .relaxed) }

    public static func isEnabled(_ level: Level) -> Bool { level.rawValue >= minimum.load(ordering: .relaxed) }

    /// Logs `message` with `fields` (values are written as JSON strings, or raw numbers for Int).
    public static func write(
        _ level: Level, _ message: @autoclosure () -> String,
        _ fields: @autoclosure () -> [(String, any Sendable)] = [], force: Bool = false
    ) {
        guard force || isEnabled(level) else { return }
        let millis = WallClock.nowMilliseconds()
        var line = #"{"ts":\#(millis),"level":"\#(level.name)","msg":\#(JSONString.quoted(message()))"#
        for (key, value) in fields() {
            line += ",\(JSONString.quoted(key)):"
            switch value {
            case let number as Int: line += String(number)
            case let flag as Bool: line += flag ? "true" : "false"
            default: line += JSONString.quoted(String(describing: value))
            }
        }
        line += "}\n"
        var bytes = Array(line.utf8)
        _ = bytes.withUnsafeMutableBytes { Glibc.write(2, $0.baseAddress, $0.count) }
    }

    /// Logs at info whatever the level: the lines tools wait for (`listening`, `stopped`).
    public static func always(_ message: String, _ fields: [(String, any Sendable)] = []) {
        write(.info, message, fields, force: true)
    }

    public static func info(
        _ message: @autoclosure () -> String, _ fields: @autoclosure () -> [(String, any Sendable)] = []
    ) {
        write(.info, message(), fields())
    }

    public static func warning(
        _ message: @autoclosure () -> String, _ fields: @autoclosure () -> [(String, any Sendable)] = []
    ) {
        write(.warning, message(), fields())
    }

    public static func error(
        _ message: @autoclosure () -> String, _ fields: @autoclosure () -> [(String, any Sendable)] = []
    ) {
        write(.error, message(), fields())
    }

    public static func debug(
        _ message: @autoclosure () -> String, _ fields: @autoclosure () -> [(String, any Sendable)] = []
    ) {
        write(.debug, message(), fields())
    }
}
