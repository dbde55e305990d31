/// An experiment definition (DESIGN §6), validated.
///
/// Invariants: at least one variant, unique variant keys, positive total weight; overrides name
/// known variants; `traffic` in 0...1 unless a `layer` with `layerRange` (from < to, within
/// 0...10000) replaces it; every screen change is an object (a merge patch) for a known variant.
public struct Experiment: Equatable, Sendable {
    /// Only `running` experiments change what clients see.
    public enum Status: String, Sendable { case draft, running, stopped }

    /// A variant and its integer weight (0 ... `maxWeight`; the total is positive).
    public struct Variant: Equatable, Sendable {
        public var key: String
        public var weight: Int
    }

    /// Who may enter (step 1 of DESIGN §6); a nil field does not restrict.
    public struct Audience: Equatable, Sendable {
        public var platforms: [String]?
        public var appVersion: VersionRange?
        public var cohort: String?
    }

    public var key: String
    public var salt: String
    public var status: Status
    public var traffic: Double
    public var layer: String?
    public var layerRange: Range<Int>?
    public var audience: Audience
    public var variants: [Variant]
    public var overrides: [String: String]
    /// screen name → variant key → RFC 7386 merge patch.
    public var screens: [String: [String: JSONValue]]
    public var sticky: Bool
    /// The definition as submitted (what GET returns).
    public var json: JSONValue
    /// Names this definition (`ETag`; `If-Match` of a change): the first 16 hex digits of the
    /// SHA-256 of its canonical JSON, the same on every hub.
    public private(set) var etag = ""

    public var totalWeight: Int { variants.reduce(0) { $0 + $1.weight } }

    /// The largest weight a variant may have (issue 9: larger or fractional weights were taken as 1
    /// and assigned units differently from the documented function).
    public static let maxWeight = 1_000_000

    /// The bytes of "{salt}/{key}/", which every bucket hash of this experiment starts with.
    public private(set) var hashPrefix: [UInt8] = []

    /// The bytes of "layer/{layer}/" for layered experiments (empty otherwise).
    public private(set) var layerPrefix: [UInt8] = []

    /// Variant i owns `[upper(i-1), upper(i))` of the 10,000 variant buckets (DESIGN §6 step 3).
    public private(set) var variantUpperBounds: [Int] = []

    static let fields = [
        "key", "salt", "status", "traffic", "layer", "layer_range", "audience", "variants", "overrides", "screens",
        "sticky",
    ]

    /// Validates a definition; every refusal is a 422 naming the field and the rule (an unknown
    /// field too: `"stauts": "running"` would otherwise leave a draft that the operator believes
    /// is running).
    public init(key: String, json: JSONValue) throws(AdminError) {
        func fail(_ field: String, _ rule: String) -> AdminError {
            AdminError(422, "invalid_experiment", "\(field): \(rule)")
        }
        func refuseUnknown(_ object: JSONObject, _ known: [String], at path: String) throws(AdminError) {
            do {
                try object.refuseUnknownFields(known: known, at: path)
            } catch {
                throw AdminError(422, error.code, error.message)
            }
        }
        guard case .object(let members) = json else {
            throw AdminError(400, "bad_request", "an experiment is a JSON object")
        }
        try refuseUnknown(members, Self.fields, at: "")
        if let named = members["key"], named.stringValue != key { throw fail("key", "must match the URL (\(key))") }
        self.key = key
        self.json = json
        if let value = members["salt"], value.stringValue?.isEmpty != false {
            throw fail("salt", "must be a non-empty string")
        }
        salt = members["salt"]?.stringValue ?? key
        if let value = members["sticky"], value != .bool(true), value != .bool(false) {
            throw fail("sticky", "must be true or false")
        }
        guard let statusText = members["status"]?.stringValue ?? Optional("draft"),
            let status = Status(rawValue: statusText)
        else {
            throw fail("status", "must be draft, running or stopped")
        }
        self.status = status
        guard let variantList = members["variants"]?.arrayValue, !variantList.isEmpty else {
            throw fail("variants", "at least one variant is needed")
        }
        var variants: [Variant] = []
        var variantKeys = Set<String>()  // validation stays linear in the number of variants
        for (i, entry) in variantList.enumerated() {
            guard case .object(let variantMembers) = entry else { throw fail("variants[\(i)]", "must be an object") }
            try refuseUnknown(variantMembers, ["key", "weight"], at: "variants[\(i)]")
            guard let variantKey = entry["key"]?.stringValue, !variantKey.isEmpty else {
                throw fail("variants[\(i)].key", "must be a non-empty string")
            }
            // An integer the documented function (DESIGN §6) computes with exactly: no fractions,
            // nothing that overflows its sums.
            var weight = 1
            if let value = entry["weight"] {
                guard let integer = value.intValue, (0...Self.maxWeight).contains(integer) else {
                    throw fail("variants[\(i)].weight", "must be an integer from 0 to \(Self.maxWeight)")
                }
                weight = integer
            }
            guard variantKeys.insert(variantKey).inserted else {
                throw fail("variants[\(i)].key", "\"\(variantKey)\" is used twice")
            }
            variants.append(Variant(key: variantKey, weight: weight))
        }
        self.variants = variants
        guard variants.reduce(0, { $0 + $1.weight }) > 0 else {
            throw fail("variants", "the total weight must be positive")
        }
        if let layer = members["layer"] {
            guard let name = layer.stringValue, !name.isEmpty else { throw fail("layer", "must be a non-empty string") }
            guard let range = members["layer_range"]?.arrayValue, range.count == 2, let from = range[0].intValue,
                let to = range[1].intValue,
                0 <= from, from < to, to <= 10_000
            else {
                throw fail("layer_range", "must be [from, to) with 0 <= from < to <= 10000")
            }
            self.layer = name
            layerRange = from..<to
            traffic = 1
        } else {
            let traffic = members["traffic"].map { $0.numberValue } ?? 1.0
            guard let traffic, (0...1).contains(traffic) else { throw fail("traffic", "must be a number from 0 to 1") }
            self.traffic = traffic
        }
        var audience = Audience()
        if let value = members["audience"], value != .null {
            guard case .object(let rule) = value else { throw fail("audience", "must be an object") }
            try refuseUnknown(rule, ["platform", "app_version", "cohort"], at: "audience")
            if let platform = rule["platform"] {
                if let one = platform.stringValue {
                    audience.platforms = [one]
                } else if let list = platform.arrayValue, list.allSatisfy({ $0.stringValue != nil }) {
                    audience.platforms = list.compactMap(\.stringValue)
                } else {
                    throw fail("audience.platform", "must be a string or an array of strings")
                }
            }
            if let range = rule["app_version"] {
                guard let text = range.stringValue, let parsed = VersionRange(text) else {
                    throw fail("audience.app_version", "must be a range such as \">=5.0.0\"")
                }
                audience.appVersion = parsed
            }
            if let cohort = rule["cohort"] {
                guard let name = cohort.stringValue else { throw fail("audience.cohort", "must be a cohort name") }
                audience.cohort = name
            }
        }
        self.audience = audience
        var overrides: [String: String] = [:]
        if let value = members["overrides"], value != .null {
            guard case .object(let entries) = value else {
                throw fail("overrides", "must be an object of unit → variant")
            }
            for (unit, variant) in entries {
                guard let name = variant.stringValue, variantKeys.contains(name) else {
                    throw fail("overrides.\(unit)", "names an unknown variant")
                }
                overrides[unit] = name
            }
        }
        self.overrides = overrides
        var screens: [String: [String: JSONValue]] = [:]
        if let value = members["screens"], value != .null {
            guard case .object(let entries) = value else {
                throw fail("screens", "must be an object of screen → variant → merge patch")
            }
            for (screen, perVariant) in entries {
                guard case .object(let patches) = perVariant else {
                    throw fail("screens.\(screen)", "must be an object of variant → merge patch")
                }
                for (variant, patch) in patches {
                    guard variantKeys.contains(variant) else {
                        throw fail("screens.\(screen).\(variant)", "names an unknown variant")
                    }
                    guard case .object = patch else {
                        throw fail("screens.\(screen).\(variant)", "a merge patch must be an object")
                    }
                    screens[screen, default: [:]][variant] = patch
                }
            }
        }
        self.screens = screens
        sticky = members["sticky"] == .bool(true)
        etag = String(ScreenHash.of(json).prefix(16))
        hashPrefix = Array("\(salt)/\(key)/".utf8)
        layerPrefix = layer.map { Array("layer/\($0)/".utf8) } ?? []
        var cumulative = 0
        let total = variants.reduce(0) { $0 + $1.weight }
        variantUpperBounds = variants.map { variant in
            cumulative += variant.weight
            return 10_000 * cumulative / total
        }
    }
}
