/// The hub state a client loop reads (DESIGN §9 "Who owns what"): screens with their kept
/// versions, cohorts, the experiments in force with the sticky assignments, and the live window
/// of the sync log — as of the last `HubChange` the loop applied.
///
/// Invariants: only values (immutable classes, copy-on-write collections), so a copy is cheap and
/// may cross threads; the control plane owns the authoritative copy and every loop's copy equals
/// it as of the changes that loop has drained from its mailbox, applied in the same order.
public struct HubView: Sendable {
    /// Kept versions per screen, oldest first; the last is current; never empty.
    public internal(set) var screens: [String: [ScreenVersion]] = [:]
    public internal(set) var cohorts: [String: Cohort] = [:]
    public internal(set) var experiments = ExperimentSet.empty
    /// experiment → unit → variant: first assignments of sticky experiments (DESIGN §6).
    public internal(set) var sticky: [String: [String: String]] = [:]
    public internal(set) var syncs = SyncWindow()
    /// The rolling release of each screen that has one (DESIGN §15). Its candidate is not among
    /// `screens` until the release ends; the base, the screen's current version, is.
    var releases: [String: Release] = [:]
    /// The registered components and app profiles (DESIGN §16).
    public internal(set) var components = ComponentRegistry()

    public init() {}

    /// The screen's current version: what every client sees unless a release exposes it.
    public func current(_ screen: String) -> ScreenVersion? { screens[screen]?.last }

    /// The version `client` sees: the candidate of a rolling release that exposes its unit (the
    /// user, else the device; a client with neither is not exposed), else the current one.
    /// - Parameter held: the version the client holds; one that holds the candidate keeps it while
    ///   the release rolls (a unit once exposed stays exposed, even after it left the QA cohort),
    ///   so a client's versions never go back.
    func current(_ screen: String, for client: ClientAttributes, holding held: Int? = nil) -> ScreenVersion? {
        if let release = releases[screen] {
            let unit = client.user ?? client.device
            if held == release.candidate.version
                || (!unit.isEmpty && ReleaseExposure.exposes(release, client, unit: unit, view: self))
            {
                return release.candidate
            }
        }
        return current(screen)
    }

    /// A kept version, or the candidate of the rolling release (a client resuming from it).
    public func version(_ screen: String, _ version: Int) -> ScreenVersion? {
        if let candidate = releases[screen]?.candidate, candidate.version == version { return candidate }
        return screens[screen]?.first { $0.version == version }
    }

    /// Applies one change; `keepVersions` bounds each screen's history (DESIGN §4).
    mutating func apply(_ change: HubChange, keepVersions: Int) {
        switch change {
        case .screenPublished(let version, _):
            keep(version, keepVersions: keepVersions)
        case .screenDeleted(let name):
            screens[name] = nil
            releases[name] = nil
        case .screenReloaded(let name, let versions, let release):
            screens[name] = versions.isEmpty ? nil : Array(versions.suffix(keepVersions))
            releases[name] = release
        case .releaseChanged(let release, let revert):
            if release.status == .rolling {
                releases[release.screen] = release
            } else if releases[release.screen]?.id == release.id {
                // It ended: the candidate joins the kept versions, and after a halt the version
                // that gives the base tree back.
                releases[release.screen] = nil
                keep(release.candidate, keepVersions: keepVersions)
                if let revert { keep(revert, keepVersions: keepVersions) }
            }
        case .cohortChanged(let name, let cohort):
            cohorts[name] = cohort
        case .experimentsChanged(let set, _):
            for key in sticky.keys where set.all[key] == nil { sticky[key] = nil }
            experiments = set
        case .stickyRecorded(let experiment, let unit, let variant):
            sticky[experiment, default: [:]][unit] = variant
        case .syncAppended(let sync):
            syncs.append(sync)
        case .componentsChanged(let registry):
            components = registry
        }
    }

    private mutating func keep(_ version: ScreenVersion, keepVersions: Int) {
        var versions = screens.removeValue(forKey: version.name) ?? []
        versions.append(version)
        if versions.count > keepVersions { versions.removeFirst(versions.count - keepVersions) }
        screens[version.name] = versions
    }

    // MARK: - Membership (DESIGN §5, §6)

    /// Whether `client` is in cohort `name`: listed, matched by the rule, or named by its token.
    public func isInCohort(_ name: String, _ client: ClientAttributes) -> Bool {
        if client.claimCohorts.contains(name) { return true }
        guard let cohort = cohorts[name] else { return false }
        if let user = client.user, cohort.users.contains(user) { return true }
        return cohort.rule?.matches(client, in: self) ?? false
    }

    /// Whether `client` is assigned `variant` in the running experiment `key`.
    public func isInVariant(_ key: String, _ variant: String, _ client: ClientAttributes) -> Bool {
        guard let experiment = experiments.all[key], experiment.status == .running else { return false }
        return assignment(experiment, unit: client.user ?? client.device, client: client).variant == variant
    }

    /// The unit's variant: its sticky first assignment if it has one (and no override), else
    /// DESIGN §6's function.
    public func assignment(_ experiment: Experiment, unit: String, client: ClientAttributes?) -> Assignment.Outcome {
        if experiment.sticky, experiment.overrides[unit] == nil, let stored = sticky[experiment.key]?[unit] {
            return .variant(stored, reason: "sticky")
        }
        return Assignment.assign(experiment, unit: unit, client: client, view: self)
    }

    /// Whether `target` reaches `client` (DESIGN §5), through one code path for every scope.
    public func matches(_ target: Target, _ client: ClientAttributes) -> Bool {
        if let platform = target.platform, client.platform != platform { return false }
        if let range = target.appVersion {
            guard let version = client.appVersion, range.contains(version) else { return false }
        }
        if let variant = target.variant, !isInVariant(variant.experiment, variant.variant, client) { return false }
        switch target.scope {
        case .user(let user): return client.user == user
        case .users(let users): return client.user.map(users.contains) ?? false
        case .cohort(let name): return isInCohort(name, client)
        case .all: return true
        }
    }
}

/// One change of hub state, as the control plane sends it to every loop after it is durable.
enum HubChange: Sendable {
    /// A new version, with what the control plane already rendered and encoded for it.
    case screenPublished(ScreenVersion, prepared: RenditionCache.Entry?)
    case screenDeleted(String)
    /// nil: deleted.
    case cohortChanged(String, Cohort?)
    /// The new set, and the screens whose renditions may have changed.
    case experimentsChanged(ExperimentSet, screens: [String])
    case stickyRecorded(experiment: String, unit: String, variant: String)
    case syncAppended(Sync)
    /// A release started, its percent rose, or it ended (DESIGN §15): with, after a halt, the
    /// version that gives the exposed clients the base tree back.
    case releaseChanged(Release, revert: ScreenVersion?)
    /// A hub reloading the shared state (DESIGN §11): a screen's kept versions and its rolling
    /// release as they now are, without publishing each version (`HubState.changes(toReach:)`).
    case screenReloaded(String, versions: [ScreenVersion], release: Release?)
    /// Components or app profiles changed (DESIGN §16): the registry as it now is. What each
    /// client renders is resolved again, and every subscription brought to its new rendition.
    case componentsChanged(ComponentRegistry)
}
