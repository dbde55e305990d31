import Foundation
import Synchronization

/// A journal record of the screen store, or a piece of a snapshot being restored.
enum ScreenRecord {
    case publish(seq: Int, name: String, version: Int, publishedAt: Int, tree: JSONValue)
    case delete(seq: Int, name: String)
    case restoredScreen(name: String, lastVersion: Int, versions: [ScreenVersion])
    case restoredSeq(Int)

    var json: JSONValue {
        switch self {
        case .publish(let seq, let name, let version, let publishedAt, let tree):
            .object([
                "seq": .number(Double(seq)), "op": .string("publish"), "screen": .string(name),
                "version": .number(Double(version)), "at": .number(Double(publishedAt)), "tree": tree,
            ])
        case .delete(let seq, let name):
            .object(["seq": .number(Double(seq)), "op": .string("delete"), "screen": .string(name)])
        case .restoredScreen, .restoredSeq:
            preconditionFailure("restored records are never journaled")
        }
    }

    init?(json: JSONValue) {
        guard let seq = json["seq"]?.intValue, let name = json["screen"]?.stringValue else { return nil }
        switch json["op"]?.stringValue {
        case "publish":
            guard let version = json["version"]?.intValue, let at = json["at"]?.intValue, let tree = json["tree"] else {
                return nil
            }
            self = .publish(seq: seq, name: name, version: version, publishedAt: at, tree: tree)
        case "delete":
            self = .delete(seq: seq, name: name)
        default:
            return nil
        }
    }

    var seq: Int? {
        switch self {
        case .publish(let seq, _, _, _, _), .delete(let seq, _): seq
        case .restoredScreen, .restoredSeq: nil
        }
    }
}

/// Where the screen store lives in the data dir: `screens.snapshot.json` (the whole state as
/// of a journal sequence number) and `screens.journal` (records after it).
///
/// Invariant: restoring = loading the snapshot, then applying every journal record whose
/// `seq` is greater than the snapshot's, so a crash between writing a snapshot and truncating
/// the journal replays nothing twice.
final class ScreenPersistence: Sendable {
    let snapshotPath: String
    let journalPath: String
    private let journal: Journal.Locked

    init(directory: String) throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        snapshotPath = directory + "/screens.snapshot.json"
        journalPath = directory + "/screens.journal"
        journal = try Journal.Locked(path: journalPath)
    }

    struct FormatError: Error, CustomStringConvertible {
        var description: String
    }

    /// Feeds the snapshot, then the newer journal records, to `apply`.
    func restore(_ apply: (ScreenRecord) -> Void) throws {
        var snapshotSeq = 0
        if let bytes = try FileBytes.read(snapshotPath) {
            let json: JSONValue
            do {
                json = try JSONReader.parse(bytes, maxDepth: 10_000)
            } catch {
                throw FormatError(description: "\(snapshotPath): \(error); restore it from a backup or remove it")
            }
            guard let seq = json["seq"]?.intValue, let screens = json["screens"]?.arrayValue else {
                throw FormatError(description: "\(snapshotPath) is not a screen snapshot (no seq or screens)")
            }
            for screen in screens {
                guard let name = screen["name"]?.stringValue, let last = screen["last_version"]?.intValue,
                    let versions = screen["versions"]?.arrayValue
                else {
                    throw FormatError(
                        description: "\(snapshotPath): a screen entry lacks name, last_version or versions")
                }
                let restored = try versions.map { entry throws -> ScreenVersion in
                    guard let version = entry["version"]?.intValue, let at = entry["at"]?.intValue,
                        let tree = entry["tree"]
                    else {
                        throw FormatError(
                            description: "\(snapshotPath): a version of \(name) lacks version, at or tree")
                    }
                    return ScreenVersion(name: name, version: version, tree: tree, publishedAt: at)
                }
                apply(.restoredScreen(name: name, lastVersion: last, versions: restored))
            }
            snapshotSeq = seq
            apply(.restoredSeq(seq))
        }
        let (records, tornAt) = try Journal.read(path: journalPath)
        if let tornAt {
            Log.warning(
                "dropping a torn record at the end of the journal", [("file", journalPath), ("offset", tornAt)])
            try Journal.truncate(path: journalPath, to: tornAt)
            try journal.reopen()
        }
        var offset = 0
        for payload in records {
            defer { offset += 8 + payload.count }
            guard let json = try? JSONReader.parse(payload, maxDepth: 10_000), let record = ScreenRecord(json: json)
            else {
                throw Journal.Corruption(
                    path: journalPath, offset: offset, reason: "a record with a valid checksum is not a screen record")
            }
            if let seq = record.seq, seq > snapshotSeq { apply(record) }
        }
    }

    func append(_ record: ScreenRecord) throws {
        try journal.append(JSONWriter.write(record.json))
    }

    /// Writes the whole state as a snapshot, then empties the journal.
    func snapshot(of state: ScreenStore.State) throws {
        let screens: [JSONValue] = state.lastVersion.keys.sorted().map { name in
            let versions = state.screens[name]?.versions ?? []
            return .object([
                "name": .string(name), "last_version": .number(Double(state.lastVersion[name]!)),
                "versions": .array(
                    versions.map {
                        .object([
                            "version": .number(Double($0.version)), "at": .number(Double($0.publishedAt)),
                            "tree": $0.tree,
                        ])
                    }),
            ])
        }
        let json = JSONValue.object(["seq": .number(Double(state.seq)), "screens": .array(screens)])
        try FileBytes.writeAtomically(JSONWriter.write(json), to: snapshotPath)
        try journal.truncate()
    }
}

extension Journal {
    /// A journal shared by loops: every call under one lock (mutations are rare; the fsync
    /// dominates).
    final class Locked: Sendable {
        private let journal: Mutex<Journal?>

        init(path: String) throws(SystemError) { journal = Mutex(try Journal(path: path)) }

        func append(_ payload: [UInt8]) throws {
            try journal.withLock { journal in try journal!.append(payload) }
        }

        func truncate() throws {
            try journal.withLock { journal in try journal!.truncate() }
        }

        func reopen() throws {
            try journal.withLock { journal in
                let path = journal!.path
                journal = nil
                journal = try Journal(path: path)
            }
        }
    }
}
