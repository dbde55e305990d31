import Foundation

/// Where results and errors go: results on stdout (aligned columns or `--json`), errors on stderr.
struct Output {
    let json: Bool

    /// One line on stdout, flushed at once (a pipe or a file gets it while hubctl still runs).
    func print(_ text: String) {
        Swift.print(text)
        fflush(nil)  // every output stream: naming `stdout` is shared mutable state to Swift 6
    }

    func error(_ text: String) { FileHandle.standardError.write(Data("Error: \(text)\n".utf8)) }

    /// A progress remark on stderr (reconnecting, resubscribing): never mixed into results.
    func note(_ text: String) { FileHandle.standardError.write(Data("\(text)\n".utf8)) }

    /// Rows of cells in aligned columns, each line after `indent` (a section under a heading).
    func columns(_ rows: [[String]], indent: String = "") {
        guard let width = rows.map(\.count).max() else { return }
        let widths = (0..<width).map { column in rows.map { column < $0.count ? $0[column].count : 0 }.max() ?? 0 }
        for row in rows {
            Swift.print(
                indent
                    + row.enumerated().map { $1.padding(toLength: widths[$0], withPad: " ", startingAt: 0) }
                    .joined(separator: "  ").trimmingCharacters(in: .whitespaces))
        }
    }

    /// `key: value` rows with the values aligned.
    func table(_ rows: [(String, String)]) {
        let width = rows.map(\.0.count).max() ?? 0
        for (key, value) in rows {
            Swift.print((key + ":").padding(toLength: width + 2, withPad: " ", startingAt: 0) + value)
        }
    }
}
