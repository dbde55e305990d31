/// All mutable hub state, owned by the control plane (DESIGN §9): the view every loop reads, plus
/// the numbering that must survive deletes and expiry. Records change it; nothing else does.
///
/// Invariants: a screen's versions are strictly increasing and never reused, even across a
/// delete (`lastVersion` remembers); `apply` is deterministic, so replaying the journal rebuilds
/// the state that was acknowledged.
struct HubState {
    private(set) var view = HubView()
    /// The last version number ever given to each screen name, deleted screens included.
    private(set) var lastVersion: [String: Int] = [:]
    /// Named admin tokens (the control plane's alone: loops never see them), by name, and the
    /// name of each by its digest.
    private(set) var adminTokens: [String: AdminToken] = [:]
    private var adminTokenNames: [String: String] = [:]
    /// Each screen's kept releases (DESIGN §15), oldest first: the last `keptReleases`; a rolling
    /// one is the last (and in `view.releases`).
    private(set) var releases: [String: [Release]] = [:]
    /// The devices' push registrations (DESIGN §17): the control plane's alone (loops never push).
    private(set) var devices = DeviceRegistry()
    /// The webhooks and their queues (DESIGN §18): the control plane's alone.
    private(set) var webhooks: WebhookBook
    let keepVersions: Int
    static let keptReleases = 20

    init(keepVersions: Int, webhookQueueLimit: Int = WebhookBook.defaultQueueLimit) {
        self.keepVersions = keepVersions
        webhooks = WebhookBook(queueLimit: webhookQueueLimit)
    }

    /// A state with nothing in it and this one's settings (its webhook book's generation goes
    /// on counting from this one's: `WebhookBook.init`).
    var emptied: HubState {
        var empty = HubState(keepVersions: keepVersions, webhookQueueLimit: webhooks.queueLimit)
        empty.webhooks = WebhookBook(queueLimit: webhooks.queueLimit, generation: webhooks.generation &+ 1)
        return empty
    }

    /// Applies `record`; returns what the loops must apply to stay equal (nil: nothing).
    @discardableResult
    mutating func apply(_ record: HubRecord) -> HubChange? {
        let change: HubChange?
        switch record {
        case .screenPublished(let version):
            lastVersion[version.name] = max(lastVersion[version.name] ?? 0, version.version)
            change = .screenPublished(version, prepared: nil)
        case .screenDeleted(let name):
            releases[name] = nil
            change = .screenDeleted(name)
        case .screenNumbered(let name, let last):
            lastVersion[name] = max(lastVersion[name] ?? 0, last)
            change = nil
        case .cohortSet(let name, let cohort):
            change = .cohortChanged(name, cohort)
        case .cohortUsersEdited(let name, let add, let remove):
            var cohort = view.cohorts[name] ?? Cohort(users: [], rule: nil)
            view.cohorts[name] = nil  // keep the set uniquely referenced while it changes
            cohort.users.formUnion(add)
            cohort.users.subtract(remove)
            change = .cohortChanged(name, cohort)
        case .cohortRuleSet(let name, let rule):
            var cohort = view.cohorts[name] ?? Cohort(users: [], rule: nil)
            view.cohorts[name] = nil  // as above: the users set is not copied
            cohort.rule = rule
            change = .cohortChanged(name, cohort)
        case .cohortDeleted(let name):
            change = .cohortChanged(name, nil)
        case .experimentPut(let experiment):
            change = experimentsChanged(experiment.key, to: experiment)
        case .experimentDeleted(let key):
            change = experimentsChanged(key, to: nil)
        case .stickyAssigned(let experiment, let unit, let variant):
            change = .stickyRecorded(experiment: experiment, unit: unit, variant: variant)
        case .syncAppended(let sync):
            change = .syncAppended(sync)
        case .syncNumbered(let seq):
            view.syncs.numberFrom(seq)
            change = nil
        case .adminTokenCreated(let token):
            if let old = adminTokens[token.name] { adminTokenNames[old.digest] = nil }
            adminTokens[token.name] = token
            adminTokenNames[token.digest] = token.name
            change = nil
        case .adminTokenRevoked(let name):
            if let old = adminTokens.removeValue(forKey: name) { adminTokenNames[old.digest] = nil }
            change = nil
        case .releasePut(let release):
            lastVersion[release.screen] = max(
                lastVersion[release.screen] ?? 0, release.halt?.revertVersion ?? release.candidate.version)
            keep(release)
            change = release.status == .rolling ? .releaseChanged(release, revert: nil) : nil
        case .releaseStepped(let screen, let id, let step):
            change = stepped(screen, id, step)
        case .componentPut(let component, let time):
            change = componentsChanged { $0.put(component, at: time) }
        case .componentDeleted(let name):
            change = componentsChanged { $0.delete(name) }
        case .appProfilePut(let profile):
            change = componentsChanged { $0.put(profile) }
        case .appProfileDeleted(let platform, let appVersion):
            change = componentsChanged { $0.deleteProfile(platform: platform, appVersion: appVersion) }
        case .pushDeviceSet(let device):
            devices.set(device)
            change = nil
        case .pushDeviceRemoved(let key, let token):
            devices.remove(key, token: token)
            change = nil
        case .webhook(let record):
            webhooks.apply(record)
            change = nil
        }
        if let change { view.apply(change, keepVersions: keepVersions) }
        return change
    }

    /// Keeps `release` among its screen's releases (replacing the one with its id); one that
    /// ended without its candidate's tree (the kept versions hold it while they keep it).
    private mutating func keep(_ release: Release) {
        let release = release.status == .rolling ? release : release.withoutTree()
        var kept = releases.removeValue(forKey: release.screen) ?? []
        if let index = kept.firstIndex(where: { $0.id == release.id }) {
            kept[index] = release
        } else {
            kept.append(release)
            if kept.count > Self.keptReleases { kept.removeFirst(kept.count - Self.keptReleases) }
        }
        releases[release.screen] = kept
    }

    /// A step of the rolling release `id` of `screen`; one of a release that is not rolling (or
    /// not kept) changes nothing. A halt's revert version is made here, from the base tree.
    private mutating func stepped(_ screen: String, _ id: String, _ step: Release.Step) -> HubChange? {
        guard let release = view.releases[screen], release.id == id else { return nil }
        let next = release.taking(step)
        keep(next)
        guard case .halt(let halt) = step.action else { return .releaseChanged(next, revert: nil) }
        lastVersion[screen] = max(lastVersion[screen] ?? 0, halt.revertVersion)
        guard let base = view.current(screen) else { return .releaseChanged(next, revert: nil) }
        return .releaseChanged(
            next,
            revert: next.revert(
                of: base, version: halt.revertVersion, at: step.at, actor: step.actor, reason: halt.reason))
    }

    /// The rolling release of `screen`, if any.
    func rollingRelease(_ screen: String) -> Release? { view.releases[screen] }

    /// The kept release `id` of `screen`.
    func release(_ screen: String, _ id: String) -> Release? { releases[screen]?.first { $0.id == id } }

    private func experimentsChanged(_ key: String, to experiment: Experiment?) -> HubChange {
        let old = view.experiments
        var all = old.all
        var changedAt = old.changedAt
        all[key] = experiment
        changedAt[key] = experiment == nil ? nil : old.generation + 1
        let screens = Set(old.all[key]?.screens.keys.map { $0 } ?? []).union(experiment?.screens.keys.map { $0 } ?? [])
        return .experimentsChanged(
            ExperimentSet(generation: old.generation + 1, all: all, changedAt: changedAt), screens: screens.sorted())
    }

    /// The registry after `edit` (DESIGN §16): every loop re-resolves what its clients render.
    private func componentsChanged(_ edit: (inout ComponentRegistry) -> Void) -> HubChange {
        var registry = view.components
        edit(&registry)
        return .componentsChanged(registry)
    }

    /// The named token whose secret is `presented`, if any.
    func adminToken(presented: String) -> AdminToken? {
        adminTokenNames[AdminToken.digest(of: presented)].flatMap { adminTokens[$0] }
    }

    /// The changes that bring a loop whose view equals this state's to `target`'s view, and
    /// `target` with its experiment set renumbered after this one's (a hub reloading the shared
    /// snapshot, DESIGN §11). Screens get their versions newer than the loop's, in order (version
    /// numbers are never reused, so newer is greater); a screen `target` lacks is deleted; a cohort
    /// that differs is replaced; the experiment set, when it differs, is sent whole with a
    /// generation after this one's (loops label renditions by generation, which must not repeat);
    /// sticky assignments and syncs the loop lacks are added.
    func changes(toReach target: HubState) -> (changes: [HubChange], target: HubState) {
        var changes: [HubChange] = []
        var target = target
        // The registry first: versions published meanwhile are rendered with what clients can
        // render now, not with what they could before (the other hub published them so).
        if view.components != target.view.components { changes.append(.componentsChanged(target.view.components)) }
        // A screen whose release started, rose or ended meanwhile, or that gained the candidate of
        // a release, is reloaded whole: its versions and its release in one change, after which
        // each subscriber is brought from what it holds to what it should see. Publishing those
        // versions one by one would send a halted candidate to clients it never exposed.
        var reloaded = Set<String>()
        let involved = Set(view.releases.keys).union(target.view.releases.keys).union(target.releases.keys)
        for name in involved.sorted() {
            guard let versions = target.view.screens[name] else { continue }  // deleted: below
            let mine = view.releases[name], theirs = target.view.releases[name]
            let known = view.screens[name]?.last?.version ?? 0
            let candidates = Set((target.releases[name] ?? []).map(\.candidate.version))
            let releaseMoved = mine?.id != theirs?.id || mine?.steps != theirs?.steps
            guard releaseMoved || versions.contains(where: { $0.version > known && candidates.contains($0.version) })
            else { continue }
            changes.append(.screenReloaded(name, versions: versions, release: theirs))
            reloaded.insert(name)
        }
        for name in target.view.screens.keys.sorted() where !reloaded.contains(name) {
            let known = view.screens[name]?.last?.version ?? 0
            for version in target.view.screens[name]! where version.version > known {
                changes.append(.screenPublished(version, prepared: nil))
            }
        }
        for name in view.screens.keys.sorted() where target.view.screens[name] == nil {
            changes.append(.screenDeleted(name))
        }
        for name in Set(view.cohorts.keys).union(target.view.cohorts.keys).sorted() {
            let old = view.cohorts[name], new = target.view.cohorts[name]
            if old?.users != new?.users || old?.rule != new?.rule || (old == nil) != (new == nil) {
                changes.append(.cohortChanged(name, new))
            }
        }
        if view.experiments.all != target.view.experiments.all {
            let old = view.experiments
            let generation = old.generation + 1
            var changedAt: [String: Int] = [:]
            for (key, experiment) in target.view.experiments.all {
                changedAt[key] = old.all[key] == experiment ? old.changedAt[key] ?? generation : generation
            }
            let set = ExperimentSet(generation: generation, all: target.view.experiments.all, changedAt: changedAt)
            let screens = Set(old.all.values.flatMap { $0.screens.keys }).union(set.all.values.flatMap { $0.screens.keys })
            target.view.experiments = set
            changes.append(.experimentsChanged(set, screens: screens.sorted()))
        }
        for experiment in target.view.sticky.keys.sorted() {
            for (unit, variant) in target.view.sticky[experiment]!.sorted(by: { $0.key < $1.key })
            where view.sticky[experiment]?[unit] != variant {
                changes.append(.stickyRecorded(experiment: experiment, unit: unit, variant: variant))
            }
        }
        for sync in target.view.syncs.syncs where sync.seq > view.syncs.lastSeq { changes.append(.syncAppended(sync)) }
        return (changes, target)
    }

    /// The next version number of `name`.
    func nextVersion(of name: String) -> Int { (lastVersion[name] ?? 0) + 1 }

    /// Records that rebuild this state from nothing (what a snapshot holds).
    func snapshotRecords() -> [HubRecord] {
        var records: [HubRecord] = []
        for name in lastVersion.keys.sorted() {
            for version in view.screens[name] ?? [] { records.append(.screenPublished(version)) }
            records.append(.screenNumbered(name, lastVersion: lastVersion[name]!))
        }
        for name in view.cohorts.keys.sorted() { records.append(.cohortSet(name, view.cohorts[name]!)) }
        for key in view.experiments.all.keys.sorted() { records.append(.experimentPut(view.experiments.all[key]!)) }
        for experiment in view.sticky.keys.sorted() {
            for (unit, variant) in view.sticky[experiment]!.sorted(by: { $0.key < $1.key }) {
                records.append(.stickyAssigned(experiment: experiment, unit: unit, variant: variant))
            }
        }
        for sync in view.syncs.syncs { records.append(.syncAppended(sync)) }
        records.append(.syncNumbered(view.syncs.lastSeq))
        for name in releases.keys.sorted() { for release in releases[name]! { records.append(.releasePut(release)) } }
        for name in adminTokens.keys.sorted() { records.append(.adminTokenCreated(adminTokens[name]!)) }
        let registry = view.components
        for name in registry.components.keys.sorted() {
            let registered = registry.components[name]!
            records.append(.componentPut(registered.component, at: registered.updatedAt))
        }
        for platform in registry.profiles.keys.sorted() {
            for profile in registry.profiles[platform]! { records.append(.appProfilePut(profile)) }
        }
        for device in devices.all.sorted(by: { ($0.user ?? "", $0.device) < ($1.user ?? "", $1.device) }) {
            records.append(.pushDeviceSet(device))
        }
        records += webhooks.snapshotRecords().map(HubRecord.webhook)
        return records
    }
}
