import Glibc

/// The identity of a hub state (`welcome.epoch`, docs/protocol.md "Epochs"): a random name given
/// when a state starts empty, kept as long as that state lives. Sequence numbers (`sync_seq`,
/// screen versions) count within one epoch; a client that stored them under another epoch — a
/// wiped data dir, another cluster, another hub — must not be served as if they were ours.
///
/// Where it lives: beside the data dir's journal in `state.epoch` (one line), made anew whenever
/// the journal and snapshot are both absent or empty, so a state that is deleted and started
/// again gets a new epoch even if the old file stayed; scaled out, in Redis (`pushhub:epoch`,
/// set once by the first hub, `SharedStateLoad`).
enum StateEpoch {
    static let fileName = "state.epoch"
    static let redisKey = "pushhub:epoch"

    /// "e-" and 16 random hex digits.
    static func make() -> String {
        var random = UInt64(0)
        withUnsafeMutableBytes(of: &random) { arc4random_buf($0.baseAddress!, $0.count) }
        let hex = String(random, radix: 16)
        return "e-" + String(repeating: "0", count: 16 - hex.count) + hex
    }

    /// The epoch of the state in `directory`, made (durably) when that state is new or predates epochs.
    /// Call before the journal is opened (opening creates its file).
    static func ofDataDirectory(_ directory: String) throws -> String {
        let path = directory + "/" + fileName
        let isEmptyState =
            !Self.hasBytes(directory + "/" + StateJournal.snapshotFile)
            && !Self.hasBytes(directory + "/" + StateJournal.journalFile)
        if !isEmptyState, let bytes = try FileBytes.read(path) {
            let kept = String(decoding: bytes, as: UTF8.self).trimmingWhitespace()
            if !kept.isEmpty { return kept }
        }
        let epoch = make()
        try FileBytes.writeAtomically(Array((epoch + "\n").utf8), to: path)
        return epoch
    }

    private static func hasBytes(_ path: String) -> Bool {
        var status = stat()
        return stat(path, &status) == 0 && status.st_size > 0
    }
}
