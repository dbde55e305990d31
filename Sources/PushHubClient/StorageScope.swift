import Foundation
import ScreenTree

/// Where one user's state lives in a `ClientStorage` (docs/clients.md "Storage"): every key but
/// the anonymous device id is inside the scope of a user — `user:<sub>` when signed in (the
/// token's `sub`, read without verifying it: the hub verifies), else `device:<id>` — so one
/// user's trees and `last_sync` are never read for another, whoever shares the storage.
///
/// ```
/// device                        the generated device id (anonymous clients)
/// push_token                    {"provider":"apns","token":"…","topic":"…","type":"push_token"}
/// user:u42:epoch                {"epoch":"e-…","last_sync":1240}   the hub state the scope belongs to
/// user:u42:syncs                ["s-1239","s-1240"]   the last 64 syncs handed to the app
/// user:u42:screen:home          {"epoch":"e-…","hash":"…","tree":{…},"variants":{…},"version":42}
/// ```
///
/// Invariant: the user part is percent-encoded (only letters, digits and `-._~` stay), so no two
/// users' keys collide and a key never holds a second `:` before `epoch`/`screen:`.
struct StorageScope: Sendable, Equatable {
    /// `user:<sub>` or `device:<id>`, encoded; "" for `none`.
    let name: String

    /// No scope yet (before the first connection names the user): equal to no real one.
    static let none = StorageScope(name: "")

    private init(name: String) { self.name = name }

    init(token: String?, device: String?) {
        if let token {
            name = "user:" + Self.encoded(Self.subject(ofToken: token) ?? "")
        } else {
            name = "device:" + Self.encoded(device ?? "")
        }
    }

    /// The scope's record: its epoch and `last_sync`.
    var recordKey: String { name + ":epoch" }

    func screenKey(_ screen: String) -> String { name + ":screen:" + screen }

    /// The ids of the last syncs handed to the app (a JSON array, oldest first), so that the
    /// socket and a push hand each one over once, across restarts too.
    var handledSyncsKey: String { name + ":syncs" }

    /// The unscoped key of the device's push token (the token belongs to the device, whoever signs in).
    static let pushTokenKey = "push_token"

    /// The unscoped key of the anonymous device id (it names the scope, so it cannot be in one).
    static let deviceKey = "device"
    /// What clients before scopes kept unscoped; whose it was is unknown, so it is removed unread.
    static let legacyLastSyncKey = "last_sync"

    /// The `sub` claim of a JWT's payload, unverified; nil when the token is not a readable JWT.
    static func subject(ofToken token: String) -> String? {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count >= 2 else { return nil }
        var base64 = parts[1].replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        guard let payload = Data(base64Encoded: base64), let claims = try? JSONReader.parse(Array(payload)),
            let subject = claims["sub"]?.stringValue, !subject.isEmpty
        else { return nil }
        return subject
    }

    private static func encoded(_ text: String) -> String {
        var unreserved = CharacterSet.alphanumerics
        unreserved.insert(charactersIn: "-._~")
        return text.addingPercentEncoding(withAllowedCharacters: unreserved) ?? text
    }
}

/// A scope's record (`<scope>:epoch`): the hub state (`welcome.epoch`) its screens and
/// `last_sync` were counted in. Unreadable is as good as absent: a fresh start.
struct ScopeRecord: Sendable, Equatable {
    var epoch: String?
    var lastSync: Int?

    init(epoch: String?, lastSync: Int?) {
        self.epoch = epoch
        self.lastSync = lastSync
    }

    init(stored text: String?) {
        guard let text, let value = try? JSONReader.parse(text), let epoch = value["epoch"]?.stringValue else {
            self.init(epoch: nil, lastSync: nil)
            return
        }
        self.init(epoch: epoch, lastSync: value["last_sync"]?.intValue)
    }

    /// `{"epoch":…,"last_sync":…}` (canonical member order), the JavaScript client's form too.
    var stored: String {
        var object: JSONObject = [:]
        if let epoch { object["epoch"] = .string(epoch) }
        if let lastSync { object["last_sync"] = .number(Double(lastSync)) }
        return JSONWriter.string(.object(object))
    }
}

/// A screen as stored: its tree, version and hash, the experiment variants that shaped it, and
/// the epoch they count in (nil: stored by a fetch before any session of this user named one).
/// The variants are kept so that a patch after a restart, which names them only when they
/// change, leaves them right.
struct StoredScreen: Sendable, Equatable {
    var tree: JSONValue
    var version: Int
    var hash: String
    var epoch: String?
    var variants: [String: String]

    /// `{"epoch","hash","tree","variants","version"}` in canonical member order around the tree's
    /// canonical bytes (written once per version), the JavaScript client's form too; `variants`
    /// only when there are some (the form before issue 26 is the form without experiments).
    static func form(
        epoch: String?, canonical tree: [UInt8], version: Int, hash: String, variants: [String: String] = [:]
    ) -> String {
        var bytes: [UInt8] = [UInt8(ascii: "{")]
        if let epoch { bytes += Array(#""epoch":"#.utf8) + JSONWriter.write(.string(epoch)) + [UInt8(ascii: ",")] }
        bytes += Array(#""hash":"#.utf8)
        bytes += JSONWriter.write(.string(hash))
        bytes += Array(#","tree":"#.utf8)
        bytes += tree
        if !variants.isEmpty { bytes += Array(#","variants":"#.utf8) + JSONWriter.write(Self.json(variants)) }
        bytes += Array(#","version":\#(version)}"#.utf8)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// A stored screen whose tree still hashes to its hash; nil otherwise (then it is dropped).
    init?(stored text: String) {
        // Unreadable is as good as absent: the hub sends a snapshot.
        guard let value = try? JSONReader.parse(text, maxDepth: JSONReader.envelopeMaxDepth), let tree = value["tree"],
            let version = value["version"]?.intValue, let hash = value["hash"]?.stringValue, ScreenHash.of(tree) == hash
        else { return nil }
        self.init(
            tree: tree, version: version, hash: hash, epoch: value["epoch"]?.stringValue,
            variants: Self.variants(value["variants"]) ?? [:])
    }

    init(tree: JSONValue, version: Int, hash: String, epoch: String?, variants: [String: String] = [:]) {
        self.tree = tree
        self.version = version
        self.hash = hash
        self.epoch = epoch
        self.variants = variants
    }

    /// A `variants` member (experiment key → variant key) as the hub sends and we store it; nil
    /// when absent or not an object. Members whose value is not a string are skipped.
    static func variants(_ value: JSONValue?) -> [String: String]? {
        guard let object = value?.objectValue else { return nil }
        var variants: [String: String] = [:]
        for member in object { if let variant = member.value.stringValue { variants[member.key] = variant } }
        return variants
    }

    static func json(_ variants: [String: String]) -> JSONValue {
        .object(JSONObject(variants.mapValues(JSONValue.string)))
    }
}
