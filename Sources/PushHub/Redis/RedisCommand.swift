/// One command for Redis: its name and arguments, sent as a RESP2 array of bulk strings
/// (binary-safe). `label` names it in errors and logs without its arguments, which may be
/// secrets (AUTH) or large (a journal entry).
///
/// ```
/// *3\r\n $3\r\nSET\r\n $1\r\nk\r\n $1\r\nv\r\n      SET k v
/// ```
struct RedisCommand: Sendable {
    var arguments: [[UInt8]]
    /// What errors call this command: the name, plus the key when it says which command failed.
    var label: String

    init(_ name: String, _ arguments: [String], label: String? = nil) {
        self.init(name, bytes: arguments.map { Array($0.utf8) }, label: label)
    }

    init(_ name: String, bytes arguments: [[UInt8]], label: String? = nil) {
        self.arguments = [Array(name.utf8)] + arguments
        self.label = label ?? name
    }

    /// Appends the command's RESP encoding to `output`.
    func encode(into output: inout [UInt8]) {
        Self.header(UInt8(ascii: "*"), arguments.count, into: &output)
        for argument in arguments {
            Self.header(UInt8(ascii: "$"), argument.count, into: &output)
            output.append(contentsOf: argument)
            output.append(13)
            output.append(10)
        }
    }

    private static func header(_ type: UInt8, _ count: Int, into output: inout [UInt8]) {
        output.append(type)
        output.append(contentsOf: String(count).utf8)
        output.append(13)
        output.append(10)
    }
}
