/// A scaled-out hub's first load of the shared state (DESIGN §11), before its loops start: the
/// snapshot from Redis, then every journal entry after it. It blocks, driving one Redis link
/// with a `PollDriver`; the hub does not serve before it knows the state.
enum SharedStateLoad {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// Loads the state into `state` (which must be empty), after checking that this hub's
    /// secrets are those of the live hubs (`ClusterKeys`).
    /// - Parameter timeout: how long to wait for Redis to answer at all.
    /// - Returns: the number of the last entry applied, and the shared state's epoch.
    static func load(
        endpoint: RedisEndpoint, hubID: String, keys: ClusterKeys, waitingUpTo timeout: Duration,
        into state: inout HubState
    ) throws(Failure) -> (applied: Int, epoch: String) {
        let url = endpoint.url
        let link = RedisConnection(options: endpoint.options(clientName: "pushhub:\(hubID):load"), now: MonotonicClock.now())
        defer { link.close() }
        let driver = PollDriver([link])
        // A certificate that is not trusted will not be trusted on the next attempt either.
        guard driver.run(for: timeout, until: { link.isReady || link.certificateRefused }), link.isReady else {
            throw Failure(
                description: "Redis at \(url) did not answer within \(timeout) (\(link.notReadyReason)); "
                    + "a hub scaled out over Redis loads the shared state from it before it serves")
        }
        func call(_ command: RedisCommand) throws(Failure) -> RESPValue {
            var outcome: Result<RESPValue, RedisError>?
            link.send(command, now: MonotonicClock.now()) { outcome = $0 }
            driver.run(for: .seconds(60)) { outcome != nil }
            switch outcome {
            case .success(let value)?: return value
            case .failure(let error)?: throw Failure(description: "loading the shared state: \(error)")
            case nil: throw Failure(description: "loading the shared state: \(command.label) got no answer")
            }
        }
        for entry in try call(HubRegistry.liveCommand).elements ?? [] {
            // An entry that is not JSON (another version's) cannot be compared; it is let be.
            guard let info = entry.string.flatMap({ try? JSONReader.parse(Array($0.utf8)) }) else { continue }
            let theirs = ClusterKeys(info["keys"])
            let hub = info["hub"]?.stringValue ?? "?"
            // A hub of a version before fingerprints cannot be compared; it is let be.
            if let theirs, let difference = keys.difference(from: theirs, hub: hub) {
                throw Failure(description: "refusing to join the hubs sharing \(url): \(difference)")
            }
        }
        // The first hub of a new shared state names its epoch; every later one reads it.
        _ = try call(RedisCommand("SET", [StateEpoch.redisKey, StateEpoch.make(), "NX"]))
        guard let epoch = try call(RedisCommand("GET", [StateEpoch.redisKey])).string else {
            throw Failure(description: "Redis at \(url) holds no \(StateEpoch.redisKey) right after it was set")
        }
        // A snapshot written between reading it and reading the stream may trim entries this
        // load still needs: then it starts again from the newer snapshot.
        for _ in 0..<5 {
            var fresh = state.emptied
            var applied: Int
            switch ClusterJournal.snapshotWithSets(in: try call(RedisCommand("HGETALL", [ClusterJournal.snapshotKey]))) {
            case .success(let snapshot):
                applied = snapshot.lsn
                for record in snapshot.records { fresh.apply(record) }
                // Cohorts of millions: their users are read from their sets, in batches.
                for name in snapshot.cohortsInSets {
                    var cursor = "0"
                    repeat {
                        switch ClusterJournal.scanned(try call(ClusterJournal.scanCommand(cohort: name, from: cursor))) {
                        case .failure(let error): throw Failure(description: "reading cohort \(name): \(error)")
                        case .success(let batch):
                            fresh.apply(.cohortUsersEdited(name, add: batch.members, remove: []))
                            cursor = batch.next
                        }
                    } while cursor != "0"
                }
            case .failure(let error):
                throw Failure(description: "the shared snapshot: \(error)")
            }
            var gap = false
            reading: while true {
                let reply = try call(ClusterJournal.rangeCommand(after: applied))
                switch ClusterJournal.entries(in: reply, from: applied + 1) {
                case .entries(let entries, let more):
                    for entry in entries {
                        for record in entry.records { fresh.apply(record) }
                        applied = entry.lsn
                    }
                    if !more { break reading }
                case .gap:
                    gap = true
                    break reading
                case .undecodable(let lsn, let reason):
                    throw Failure(
                        description: "journal entry \(lsn) in Redis cannot be applied (\(reason)); "
                            + "is a newer PushHub writing to this Redis?")
                case .failed(let error):
                    throw Failure(description: "loading the shared state: \(error)")
                }
            }
            if !gap {
                state = fresh
                return (applied, epoch)
            }
        }
        throw Failure(description: "the shared snapshot was replaced five times while this hub loaded it; try again")
    }
}
