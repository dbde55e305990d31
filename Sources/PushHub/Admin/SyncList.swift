extension SyncRoutes {
    /// 50 syncs unless asked for more: the console's list.
    static let defaultListLimit = 50

    /// `GET /v1/syncs[?limit=N]`: the live syncs (those within their TTL), newest first, each as
    /// `GET /v1/syncs/{id}` answers it — so the console can follow the receipts of a sync that
    /// hubctl or the backend sent.
    func list() throws(AdminError) {
        let limit = try call.limit(default: Self.defaultListLimit)
        let now = WallClock.nowMilliseconds()
        let live = Array(call.state.view.syncs.syncs.reversed().lazy.filter { $0.expiresAt > now }.prefix(limit))
        call.gatherReceipts(seqs: live.map(\.seq)) { [plane, reply] receipts in
            let since = plane.receiptsCountedSince
            reply.json(
                200,
                .object([
                    "syncs": .array(live.map { Self.status($0, receipts[$0.seq] ?? ReceiptCounts(), since: since) })
                ]))
        }
    }

    /// A sync with its id and receipts (`targeted_online`, `delivered`, `acked`: this hub's, or
    /// scaled out every live hub's), and since when they are counted (`counted_since`, Unix
    /// seconds): receipts are counted in memory, so a hub's restart starts its counts again.
    static func status(_ sync: Sync, _ receipts: ReceiptCounts, since: Int) -> JSONValue {
        var members = sync.json.objectValue ?? JSONObject()
        members["id"] = .string(sync.id)
        members["receipts"] = receipts.json
        members["counted_since"] = .number(Double(since))
        return .object(members)
    }
}
