/// A release (DESIGN §15): a new version of a screen that reaches clients in stages — the QA
/// cohort and a percent of units — while the others keep the base version, until it is promoted
/// (everyone gets it) or halted (the exposed go back to the base tree, as a newer version).
///
/// Its id is `r-` and the candidate's version number: versions of a screen are never reused
/// (`HubState.lastVersion`), so neither are release ids, and the results log can key a release's
/// counts by screen and id for good.
///
/// Invariants: `candidate.version` is greater than `baseVersion`; `basisPoints` never decreases
/// while rolling; `steps` starts with `.start` and holds at most one ending step (`.promote` or
/// `.halt`), last; `status` follows from `steps`.
struct Release: Sendable {
    enum Status: String, Sendable {
        case rolling, promoted, halted
    }

    /// One thing that happened to the release, with when and who (`guard` for the hub itself).
    struct Step: Sendable, Equatable {
        enum Action: Sendable, Equatable {
            case start(basisPoints: Int)
            case percent(basisPoints: Int)
            case promote
            case halt(Halt)
        }

        var at: Int
        var actor: String
        var action: Action
    }

    /// Why and when a release was halted, and the numbers when the guard did it.
    struct Halt: Sendable, Equatable {
        var reason: String
        /// The health the guard judged (nil for a halt asked for by an operator).
        var numbers: ReleaseHealth.Counts?
        /// The version that republished the base tree for the exposed clients.
        var revertVersion: Int
    }

    /// The actor of what the hub does by itself (a guard's halt).
    static let guardActor = "guard"

    let screen: String
    let baseVersion: Int
    /// The new version, as it will be kept once the release ends (its author and message are the
    /// release's).
    let candidate: ScreenVersion
    /// Units in this cohort are always exposed.
    let qaCohort: String?
    let healthGuard: ReleaseGuard
    private(set) var steps: [Step]
    /// `ReleaseExposure.prefix` of this release, made once.
    let bucketPrefix: [UInt8]

    var id: String { Self.id(ofCandidate: candidate.version) }

    static func id(ofCandidate version: Int) -> String { "r-\(version)" }

    init(
        screen: String, baseVersion: Int, candidate: ScreenVersion, qaCohort: String?, healthGuard: ReleaseGuard,
        steps: [Step]
    ) {
        self.screen = screen
        self.baseVersion = baseVersion
        self.candidate = candidate
        self.qaCohort = qaCohort
        self.healthGuard = healthGuard
        self.steps = steps
        bucketPrefix = ReleaseExposure.prefix(screen: screen, release: Self.id(ofCandidate: candidate.version))
    }

    /// The share of units exposed, in hundredths of a percent (0…10000).
    var basisPoints: Int {
        for step in steps.reversed() {
            switch step.action {
            case .start(let points), .percent(let points): return points
            case .promote, .halt: continue
            }
        }
        return 0
    }

    var status: Status {
        switch steps.last?.action {
        case .promote: .promoted
        case .halt: .halted
        case .start, .percent, nil: .rolling
        }
    }

    var halt: Halt? {
        if case .halt(let halt)? = steps.last?.action { return halt }
        return nil
    }

    var startedAt: Int { steps.first?.at ?? candidate.publishedAt }

    /// The release after `step` (the caller checked it may be taken: `ReleaseRoutes`).
    func taking(_ step: Step) -> Release {
        var next = self
        next.steps.append(step)
        return next
    }

    /// The release with a `null` candidate tree: what is kept of one that ended (its history
    /// and numbers; nothing renders it any more).
    func withoutTree() -> Release {
        let bare = ScreenVersion(
            name: screen, version: candidate.version, tree: .null, publishedAt: candidate.publishedAt,
            author: candidate.author, message: candidate.message)
        return Release(
            screen: screen, baseVersion: baseVersion, candidate: bare, qaCohort: qaCohort, healthGuard: healthGuard,
            steps: steps)
    }

    /// The version that gives the exposed clients the base tree back after a halt: `base`'s
    /// tree as `version` (the one after the candidate), published by whoever halted.
    func revert(of base: ScreenVersion, version: Int, at: Int, actor: String, reason: String) -> ScreenVersion {
        ScreenVersion(
            name: screen, version: version, tree: base.tree, publishedAt: at, author: actor,
            message: "halt of release \(id): \(reason)".prefixOfScalars(ScreenRoutes.maxMessageScalars),
            rollbackOf: base.version)
    }
}

extension String {
    /// The first `count` Unicode scalars.
    func prefixOfScalars(_ count: Int) -> String {
        unicodeScalars.count <= count ? self : String(String.UnicodeScalarView(unicodeScalars.prefix(count)))
    }
}
