/// A JWK Set (RFC 7517 §5) as an identity provider publishes it: `{"keys":[…]}`, read into the
/// keys the hub verifies with, and a note per key it left out (for the log).
///
/// Invariant: `keys` is not empty and holds at most `maximumKeys` keys — an answer without a
/// usable key is an error, never an empty set (a bad answer must not sign everyone out).
struct JWKSDocument {
    /// More keys than any provider publishes (they rotate through two or three).
    static let maximumKeys = 100
    /// A JWKS is a few kilobytes; the fetch refuses bigger answers.
    static let maximumBytes = 1 << 20

    /// Why an answer is not a usable key set.
    enum Failure: Error, Equatable, CustomStringConvertible {
        case notJSON(String)
        case noKeys
        case tooManyKeys(Int)
        case noUsableKey([String])

        var description: String {
            switch self {
            case .notJSON(let why): "it is not JSON (\(why))"
            case .noKeys: "it is not a JSON object with a \"keys\" array (RFC 7517 §5)"
            case .tooManyKeys(let count): "it holds \(count) keys; the hub takes at most \(JWKSDocument.maximumKeys)"
            case .noUsableKey(let notes):
                "none of its keys can verify tokens"
                    + (notes.isEmpty ? " (it has none)" : ": " + notes.joined(separator: "; "))
            }
        }
    }

    let keys: [JWTKey]
    /// One line per key left out: its kid and why.
    let notes: [String]

    /// Reads `bytes`, the JWKS at `origin` (a URL, or the file it was kept in).
    init(parsing bytes: [UInt8], origin: String) throws(Failure) {
        guard bytes.count <= Self.maximumBytes else { throw .notJSON("\(bytes.count) bytes; at most 1 MiB") }
        let json: JSONValue
        do {
            json = try JSONReader.parse(bytes)
        } catch {
            throw .notJSON("\(error)")
        }
        guard let elements = json["keys"]?.arrayValue else { throw .noKeys }
        guard elements.count <= Self.maximumKeys else { throw .tooManyKeys(elements.count) }
        var keys: [JWTKey] = []
        var notes: [String] = []
        for element in elements {
            switch JWK.read(element, origin: origin) {
            case .key(let key): keys.append(key)
            case .skipped(let kid, let reason): notes.append(Self.name(kid) + " skipped: " + reason)
            case .refused(let kid, let error): notes.append(Self.name(kid) + " refused: " + error.description)
            }
        }
        guard !keys.isEmpty else { throw .noUsableKey(notes) }
        self.keys = keys
        self.notes = notes
    }

    private static func name(_ kid: String?) -> String { kid.map { "kid \"\($0)\"" } ?? "a key without kid" }
}
