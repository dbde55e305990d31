/// The audit log's recent entries in memory, for `GET /v1/audit` (the console's Hub view); the
/// log lines (`AuditLog`) stay the record of everything.
///
/// Invariants: holds at most `capacity` entries, dropping the oldest; owned by the control
/// plane and touched only on its thread (like the rest of its state), so it needs no lock.
struct AuditRing {
    /// One audited admin call: who, what, and the outcome.
    struct Entry: Equatable {
        var at: Int  // milliseconds since 1970
        var token: String
        var method: String
        var path: String
        var status: Int
        var error: String?
        /// What the hub did by itself, in words (a guard's halt names its numbers).
        var detail: String? = nil

        var json: JSONValue {
            var members: JSONObject = [
                "at": .number(Double(at)), "token": .string(token), "method": .string(method),
                "path": .string(path), "status": .number(Double(status)),
            ]
            if let error { members["error"] = .string(error) }
            if let detail { members["detail"] = .string(detail) }
            return .object(members)
        }
    }

    /// 500 entries: a few screens' worth of a console, and about 100 KB at most.
    static let defaultCapacity = 500

    let capacity: Int
    private var entries: [Entry] = []
    private var next = 0  // where the next entry goes once the ring is full

    init(capacity: Int = defaultCapacity) {
        precondition(capacity > 0, "an audit ring holds at least one entry")
        self.capacity = capacity
        entries.reserveCapacity(capacity)
    }

    var count: Int { entries.count }

    mutating func append(_ entry: Entry) {
        if entries.count < capacity {
            entries.append(entry)
        } else {
            entries[next] = entry
            next = (next + 1) % capacity
        }
    }

    /// The newest `limit` entries, newest first.
    func recent(_ limit: Int) -> [Entry] {
        // Oldest first: until the ring is full that is the array; then it starts at `next`.
        let ordered = entries.count < capacity ? entries : Array(entries[next...] + entries[..<next])
        return Array(ordered.suffix(limit).reversed())
    }
}
