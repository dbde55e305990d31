/// The webhook events a durable change makes (DESIGN §18), derived from its records as the
/// control plane makes them (`ControlPlane.mutate`), so that no path that changes a screen, a
/// release, a sync or an experiment can forget its event, and each event enters the journal in
/// the batch of its change (a crash keeps both or neither).
///
/// Invariant: events are made only for types some webhook wants, and only for records this hub
/// makes (records other hubs made carry their events with them).
enum WebhookEventSource {
    /// The events of `record`, judged on `state` after it was applied, at `now` (Unix ms);
    /// `hash` gives a published version's hash as an up-to-date client sees it.
    static func events(
        of record: HubRecord, in state: HubState, now: Int, hash: (ScreenVersion) -> String
    ) -> [WebhookEvent] {
        let book = state.webhooks
        guard !book.queues.isEmpty else { return [] }
        func event(_ type: WebhookEventType, _ subject: String, _ data: JSONObject) -> [WebhookEvent] {
            book.wants(type) ? [WebhookEvent(type: type, subject: subject, time: now, data: data)] : []
        }
        switch record {
        case .screenPublished(let version):
            guard book.wants(.screenPublished) else { return [] }
            var data: JSONObject = [
                "screen": .string(version.name), "version": .number(Double(version.version)),
                "hash": .string(hash(version)),
            ]
            if let author = version.author { data["author"] = .string(author) }
            if let message = version.message { data["message"] = .string(message) }
            if let rollbackOf = version.rollbackOf { data["rollback_of"] = .number(Double(rollbackOf)) }
            return event(.screenPublished, WebhookEvent.subject(screen: version.name), data)
        case .screenDeleted(let name):
            return event(.screenDeleted, WebhookEvent.subject(screen: name), ["screen": .string(name)])
        case .releasePut(let release) where release.status == .rolling:
            return event(.releaseStarted, WebhookEvent.subject(screen: release.screen), releaseData(release))
        case .releaseStepped(let screen, let id, let step):
            guard let release = state.release(screen, id) else { return [] }
            var data = releaseData(release)
            data["by"] = .string(step.actor)
            switch step.action {
            case .start, .percent:
                return event(.releasePercent, WebhookEvent.subject(screen: screen), data)
            case .promote:
                return event(.releasePromoted, WebhookEvent.subject(screen: screen), data)
            case .halt(let halt):
                data["reason"] = .string(halt.reason)
                data["revert_version"] = .number(Double(halt.revertVersion))
                return event(.releaseHalted, WebhookEvent.subject(screen: screen), data)
            }
        case .syncAppended(let sync):
            var data: JSONObject = [
                "id": .string(sync.id), "seq": .number(Double(sync.seq)), "reason": .string(sync.reason),
                "scope": .string(sync.scope), "target": sync.target.json,
            ]
            if sync.push != .none { data["push"] = .string(sync.push.rawValue) }
            return event(.syncCreated, "sync:" + sync.id, data)
        case .experimentPut(let experiment):
            return event(
                .experimentChanged, "experiment:" + experiment.key,
                [
                    "experiment": .string(experiment.key), "change": .string("put"),
                    "status": .string(experiment.status.rawValue),
                ])
        case .experimentDeleted(let key):
            return event(
                .experimentChanged, "experiment:" + key, ["experiment": .string(key), "change": .string("deleted")])
        default:
            return []
        }
    }

    private static func releaseData(_ release: Release) -> JSONObject {
        [
            "screen": .string(release.screen), "release": .string(release.id),
            "version": .number(Double(release.candidate.version)),
            "percent": .number(Double(release.basisPoints) / 100),
        ]
    }
}
