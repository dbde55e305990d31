/// Session continuity (DESIGN §5): what a client that says hello again is sent of the syncs
/// it missed.
extension Session {
    /// The live syncs a hello is owed, oldest first: those after its `last_sync` that target
    /// it — or, without a `last_sync` it may be served from, those that name its user.
    ///
    /// The view holds every sync this loop has applied; any later one arrives as `syncArrived`
    /// once the client is signed in (it is indexed before this is read), so none falls between
    /// the two.
    static func missedSyncs(
        _ hello: ClientMessage.Hello, _ attributes: ClientAttributes, view: HubView, settings: Settings, now: Int
    ) -> [(sync: Sync, mandatory: Bool)] {
        if let lastSync = trustedLastSync(hello, epoch: settings.epoch, lastSeq: view.syncs.lastSeq) {
            return view.syncs.missed(after: lastSync, now: now) { view.matches($0.target, attributes) }
        } else if let user = attributes.user {
            return view.syncs.missed(after: 0, now: now) {
                $0.target.namesUser(user) && view.matches($0.target, attributes)
            }
        }
        return []
    }

    /// The `last_sync` a hello may be served from, or 0 — "replay every kept sync that targets
    /// you" — when it cannot be from this hub state: counted in another epoch (another data dir
    /// or cluster, a reset state), or above the last seq this state gave out. Trusting it there
    /// would skip the hotfixes the client missed. Older clients send no epoch: only the bound holds.
    static func trustedLastSync(_ hello: ClientMessage.Hello, epoch: String, lastSeq: Int) -> Int? {
        guard let lastSync = hello.lastSync else { return nil }
        if let theirs = hello.epoch, theirs != epoch { return 0 }
        return lastSync > lastSeq ? 0 : lastSync
    }
}
