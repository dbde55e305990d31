/// hubctl's hand-built argument parsing, in the shape swift-argument-parser users know:
/// global options first, then a command path, then the command's own options.
///
/// Invariant: a parsed `Arguments` has every option value it was given; unknown options and
/// missing values are `UsageError`s (exit 2) that name the option.
struct Arguments {
    var url: String?
    var token: String?
    var json = false
    var help = false
    /// The command words (`screen`, `publish`, …) and positional arguments, in order.
    var words: [String] = []
    /// `--name value` options after the command (flags map to "").
    var options: [String: [String]] = [:]

    static let globalValueOptions: Set = ["--url", "--token"]

    init(_ raw: [String], flagOptions: Set<String> = []) throws(UsageError) {
        var index = 0
        while index < raw.count {
            let argument = raw[index]
            index += 1
            switch argument {
            case "-h", "--help": help = true
            case "--json": json = true
            case "--url", "--token":
                guard index < raw.count else { throw UsageError("Missing value for '\(argument)'.") }
                if argument == "--url" { url = raw[index] } else { token = raw[index] }
                index += 1
            default:
                if argument.hasPrefix("--") {
                    if flagOptions.contains(argument) {
                        options[argument, default: []].append("")
                    } else {
                        guard index < raw.count else { throw UsageError("Missing value for '\(argument)'.") }
                        options[argument, default: []].append(raw[index])
                        index += 1
                    }
                } else {
                    words.append(argument)
                }
            }
        }
    }
}

/// A usage error: printed to stderr with the command's usage, exit 2.
struct UsageError: Error {
    var message: String
    init(_ message: String) { self.message = message }
}
