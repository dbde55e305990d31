import Glibc

/// The results log of a hub on its own (`ResultsLog`): `exposures.jsonl` in the data dir, one
/// `ResultEvent` per line, appended once per control-plane tick; or memory only without a data
/// dir (results then last as long as the process, and the results answer says `"memory"`).
///
/// At start the file is read in 1 MiB chunks and folded line by line (never held whole). A line
/// cut short by a crash mid-write is cut off the file before anything is appended after it; a
/// line that does not decode is skipped and counted (`skippedLines`), never folded.
///
/// Invariant: what `deliver` got equals, in order, the file's complete lines that decode.
final class LocalResultsLog: ResultsLog {
    static let fileName = "exposures.jsonl"
    private let path: String?
    private var fd: Int32 = -1
    private let metrics: Metrics
    /// The salt a line written before results had phases counts in (`ResultEvent(json:saltOf:)`).
    private let saltOf: (String) -> String
    var deliver: (([ResultEvent]) -> Void)?
    private(set) var skippedLines = 0

    init(dataDirectory: String?, metrics: Metrics, saltOf: @escaping (String) -> String) {
        path = dataDirectory.map { $0 + "/" + Self.fileName }
        self.metrics = metrics
        self.saltOf = saltOf
    }

    deinit { if fd >= 0 { close(fd) } }

    /// "memory" too when the file could not be opened: results then last as long as the process.
    var kept: String { fd >= 0 ? "data-dir" : "memory" }
    /// Read synchronously in `load`, appended and delivered in the same call.
    var isLoaded: Bool { true }
    var hasUndelivered: Bool { false }

    func load(now: UInt64) {
        guard let path else { return }
        fd = open(path, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            metrics.persistFailures.add(1, ordering: .relaxed)
            Log.error("cannot open the exposure log; results will not be kept", [("path", path), ("errno", errno)])
            return
        }
        var chunk = [UInt8](repeating: 0, count: 1 << 20)
        var carry: [UInt8] = []
        var complete = 0  // bytes of the file up to the end of its last complete line
        while true {
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            carry += chunk[0..<count]
            guard let lastNewline = carry.lastIndex(of: 0x0A) else { continue }
            let (events, skipped) = ResultEvent.events(inLines: carry[...lastNewline], saltOf: saltOf)
            skippedLines += skipped
            deliver?(events)
            complete += lastNewline + 1
            carry.removeSubrange(...lastNewline)
        }
        if !carry.isEmpty {
            Log.warning(
                "the exposure log ends in a line cut short (a crash mid-write?); cutting it off",
                [("path", path), ("bytes", carry.count)])
            if ftruncate(fd, off_t(complete)) != 0 { metrics.persistFailures.add(1, ordering: .relaxed) }
        }
        if skippedLines > 0 {
            Log.warning("skipped lines of the exposure log that do not decode", [("lines", skippedLines)])
        }
    }

    func append(_ events: [ResultEvent], now: UInt64) {
        if fd >= 0, let path {
            let end = lseek(fd, 0, SEEK_END)
            do {
                try FileBytes.writeAll(ResultEvent.lines(events), to: fd, path: path)
            } catch {
                // Half a batch must not glue the next append onto a torn line: cut it off.
                if end >= 0 { _ = ftruncate(fd, end) }
                metrics.persistFailures.add(1, ordering: .relaxed)
                Log.error("cannot append to the exposure log", [("error", "\(error)")])
            }
        }
        deliver?(events)
    }

    func catchUp(now: UInt64, done: @escaping (String?) -> Void) { done(nil) }
    func tick(now: UInt64) {}
    var nextDeadline: UInt64 { .max }
}
