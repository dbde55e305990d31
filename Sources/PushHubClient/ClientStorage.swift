import Foundation
import ScreenTree

/// Where the client keeps what lets a restart resume without a full resend: each subscribed
/// screen's tree, version and hash (`have`), `last_sync`, and an anonymous device id. Keys are
/// short ASCII strings (`screen:home`, `last_sync`, `device`), values JSON or decimal text.
/// `UserDefaults` fits in three lines (docs/clients.md). A throwing call is reported to the app
/// as an `error` event with code `storage`; the client goes on from memory.
public protocol ClientStorage: Sendable {
    func value(forKey key: String) throws -> String?
    func set(_ value: String, forKey key: String) throws
    func removeValue(forKey key: String) throws
}

/// Storage for one process's lifetime (the default; tests).
public final class MemoryStorage: ClientStorage {
    private let values = Locked<[String: String]>([:])

    public init() {}

    public func value(forKey key: String) -> String? { values.withLock { $0[key] } }
    public func set(_ value: String, forKey key: String) { values.withLock { $0[key] = value } }
    public func removeValue(forKey key: String) { _ = values.withLock { $0.removeValue(forKey: key) } }
}

/// One file per key in a directory (created if missing); each write replaces its file
/// atomically (write to a temporary file, rename), so a crash leaves the old or the new value.
public struct FileStorage: ClientStorage {
    public let directory: URL

    public init(directory: URL) throws {
        self.directory = directory
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    /// File systems stop at 255 bytes a name; a key longer than this once encoded (a long screen
    /// name) is stored under its SHA-256 instead.
    static let maxNameBytes = 200

    /// The key percent-encoded (keys hold '/', as screen names do; everything but letters and
    /// digits is encoded), or `~sha256-` and the hex SHA-256 of its UTF-8 when that is longer than
    /// `maxNameBytes` (the Java client's `FileStorage` names files alike). The two cannot meet: an
    /// encoded name has no `~`.
    private func file(_ key: String) -> URL {
        let name = key.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? key
        guard name.utf8.count > Self.maxNameBytes else { return directory.appendingPathComponent(name) }
        return directory.appendingPathComponent("~sha256-" + ScreenHash.of(canonical: Array(key.utf8)))
    }

    public func value(forKey key: String) throws -> String? {
        let url = file(key)
        guard FileManager.default.fileExists(atPath: url.path) else { return nil }
        return String(decoding: try Data(contentsOf: url), as: UTF8.self)
    }

    public func set(_ value: String, forKey key: String) throws {
        try Data(value.utf8).write(to: file(key), options: .atomic)
    }

    public func removeValue(forKey key: String) throws {
        let url = file(key)
        guard FileManager.default.fileExists(atPath: url.path) else { return }
        try FileManager.default.removeItem(at: url)
    }
}
