import Testing

@testable import PushHub

/// Releases (DESIGN §15): the guard's arithmetic, a release's health folded from reports, and a
/// release's life in the hub state — start, percent, halt and promote, replayed from a snapshot,
/// and reached by a hub that reloads the state.
@Suite struct ReleaseTests {
    static let base: JSONValue = .object(["title": .string("Home")])
    static let candidateTree: JSONValue = .object(["title": .string("New home")])

    /// A state with `home` at version 1 and, when `percent` is given, a release of version 2 rolling.
    static func state(releasing basisPoints: Int? = 1000, qaCohort: String? = nil) -> HubState {
        var state = HubState(keepVersions: 16)
        state.apply(.screenPublished(ScreenVersion(name: "home", version: 1, tree: base, publishedAt: 1)))
        if let basisPoints { state.apply(.releasePut(release(basisPoints: basisPoints, qaCohort: qaCohort))) }
        return state
    }

    static func release(basisPoints: Int, qaCohort: String? = nil) -> Release {
        Release(
            screen: "home", baseVersion: 1,
            candidate: ScreenVersion(name: "home", version: 2, tree: candidateTree, publishedAt: 2, author: "ci"),
            qaCohort: qaCohort, healthGuard: .standard,
            steps: [Release.Step(at: 2, actor: "ci", action: .start(basisPoints: basisPoints))])
    }

    static func halt(at: Int = 3) -> HubRecord {
        .releaseStepped(
            screen: "home", release: "r-2",
            Release.Step(
                at: at, actor: "ops", action: .halt(Release.Halt(reason: "bad", numbers: nil, revertVersion: 3))))
    }

    // MARK: - The guard

    @Test("the guard trips once min_units reported and the error rate is above the limit, not at it")
    func guardArithmetic() throws {
        let limit = ReleaseGuard(maxErrorRate: 0.2, minUnits: 10)
        #expect(limit.trips(on: .init(exposed: 50, rendered: 5, errored: 4, reported: 9)) == nil)  // too few
        #expect(limit.trips(on: .init(exposed: 50, rendered: 8, errored: 2, reported: 10)) == nil)  // 20 %: at it
        let reason = try #require(limit.trips(on: .init(exposed: 50, rendered: 8, errored: 3, reported: 11)))
        #expect(reason.contains("27.27%") && reason.contains("3 of 11") && reason.contains("20%"), "\(reason)")
        #expect(ReleaseGuard(maxErrorRate: 0, minUnits: 1).trips(on: .init(exposed: 1, errored: 1, reported: 1)) != nil)
        #expect(ReleaseGuard(maxErrorRate: 1, minUnits: 1).trips(on: .init(exposed: 1, errored: 1, reported: 1)) == nil)
    }

    @Test("a guard reads its two members with the standard values for the rest, and refuses others")
    func guardReading() throws {
        #expect(try ReleaseGuard(json: nil) == .standard)
        #expect(
            try ReleaseGuard(json: .object(["min_units": .number(5)])) == ReleaseGuard(maxErrorRate: 0.02, minUnits: 5))
        for bad: JSONValue in [
            .object(["max_error_rate": .number(1.5)]), .object(["min_units": .number(0)]),
            .object(["min_units": .number(2.5)]), .object(["minimum": .number(3)]), .string("strict"),
        ] {
            #expect(throws: InputError.self) { try ReleaseGuard(json: bad) }
        }
    }

    @Test("a percent is kept in basis points, rounded, and written back to the same basis points")
    func percents() {
        #expect(ReleaseExposure.basisPoints(percent: 10) == 1000)
        #expect(ReleaseExposure.basisPoints(percent: 0.29) == 29)  // 28.999…: rounded, not cut
        #expect(ReleaseExposure.basisPoints(percent: 100) == 10_000)
        #expect(ReleaseExposure.basisPoints(percent: 100.01) == nil && ReleaseExposure.basisPoints(percent: -1) == nil)
        #expect(ReleaseExposure.basisPoints(percent: .nan) == nil)
        for points in [0, 1, 29, 1235, 9999, 10_000] {
            #expect(
                ReleaseExposure.basisPoints(percent: ReleaseExposure.percent(basisPoints: points).numberValue!)
                    == points)
        }
    }

    // MARK: - Health

    @Test(
        "a unit counts once per set; reports of a unit never served count nowhere; rendered and errored is one reporter"
    )
    func health() {
        var health = ReleaseHealth()
        func fold(_ outcome: ResultEvent.ReleaseOutcome, _ unit: String) {
            health.fold(outcome, unit: unit, unitKey: ResultsTally.unitKey(unit), at: 1)
        }
        fold(.rendered, "never-served")
        fold(.errored(component: "X", message: nil), "never-served")
        #expect(health.counts == .init())
        fold(.served, "a")
        fold(.served, "a")
        fold(.served, "b")
        fold(.rendered, "a")
        fold(.rendered, "a")
        fold(.errored(component: "Carousel", message: "boom"), "a")
        fold(.errored(component: nil, message: "again"), "b")
        fold(.errored(component: nil, message: "twice"), "b")
        #expect(health.counts == .init(exposed: 2, rendered: 1, errored: 2, reported: 2))
        #expect(health.counts.errorRate == 1)
        #expect(health.byComponent == ["Carousel": 1, ReleaseHealth.unnamedComponent: 1])
        #expect(health.recentErrors.map(\.message) == ["boom", "again", "twice"])
    }

    @Test("components are counted for the first 100 names, and the last 20 errors are kept")
    func healthBounds() {
        var health = ReleaseHealth()
        for i in 0..<150 {
            let unit = "u\(i)"
            health.fold(.served, unit: unit, unitKey: ResultsTally.unitKey(unit), at: i)
            health.fold(
                .errored(component: "C\(i)", message: "m\(i)"), unit: unit, unitKey: ResultsTally.unitKey(unit), at: i)
        }
        #expect(health.counts.errored == 150 && health.byComponent.count == ReleaseHealth.maxComponents)
        #expect(
            health.recentErrors.count == ReleaseHealth.maxRecentErrors && health.recentErrors.last?.message == "m149")
    }

    @Test(
        "release events are lines of the results log that read back equal (the fast reader declines them; the full one reads them)"
    )
    func releaseLines() throws {
        let events = [
            ResultEvent(.release(.init(screen: "home", release: "r-2", outcome: .served)), unit: "u1", at: 5),
            ResultEvent(.release(.init(screen: "home", release: "r-2", outcome: .rendered)), unit: "u1", at: 6),
            ResultEvent(
                .release(.init(screen: "home", release: "r-2", outcome: .errored(component: "C", message: "é \"x\""))),
                unit: "u2", at: 7),
            ResultEvent(
                .release(.init(screen: "home", release: "r-2", outcome: .errored(component: nil, message: nil))),
                unit: "u3", at: 8),
        ]
        let (read, skipped) = ResultEvent.events(inLines: ResultEvent.lines(events)[...], saltOf: { _ in "" })
        #expect(skipped == 0 && read.map(\.kind) == events.map(\.kind) && read.map(\.unit) == events.map(\.unit))
        // An experiment tally is not changed by them; a release tally is.
        var tally = ResultsTally()
        var releases = ReleaseTally()
        for event in read {
            tally.fold(event)
            releases.fold(event, unitKey: ResultsTally.unitKey(event.unit))
        }
        #expect(!tally.hasServed(unit: "u1"))
        #expect(releases.health(screen: "home", release: "r-2")?.counts == .init(exposed: 1, rendered: 1, reported: 1))
    }

    // MARK: - In the hub state

    @Test("a started release keeps the base current and the candidate aside, and numbers the candidate")
    func started() throws {
        let state = Self.state(releasing: 1000)
        #expect(state.view.current("home")?.version == 1 && state.view.screens["home"]?.count == 1)
        #expect(state.rollingRelease("home")?.id == "r-2" && state.nextVersion(of: "home") == 3)
        #expect(state.view.version("home", 2)?.tree == Self.candidateTree)  // a client resuming from it
    }

    @Test("a halt keeps the candidate and a newer version of the base tree; a promote keeps the candidate")
    func ending() throws {
        var halted = Self.state()
        let change = halted.apply(Self.halt())
        guard case .releaseChanged(let release, let revert?)? = change else {
            Issue.record("a halt changes the release with a revert version: \(String(describing: change))")
            return
        }
        #expect(release.status == .halted && revert.version == 3 && revert.tree == Self.base && revert.rollbackOf == 1)
        #expect(halted.view.screens["home"]?.map(\.version) == [1, 2, 3] && halted.rollingRelease("home") == nil)
        #expect(halted.nextVersion(of: "home") == 4)
        // A step of a release that ended changes nothing.
        #expect(halted.apply(Self.halt(at: 9)) == nil)
        #expect(halted.release("home", "r-2")?.steps.count == 2)

        var promoted = Self.state()
        promoted.apply(
            .releaseStepped(screen: "home", release: "r-2", Release.Step(at: 3, actor: "ci", action: .promote)))
        #expect(
            promoted.view.screens["home"]?.map(\.version) == [1, 2]
                && promoted.view.current("home")?.tree == Self.candidateTree)
        #expect(promoted.release("home", "r-2")?.status == .promoted && promoted.nextVersion(of: "home") == 3)
    }

    @Test("a snapshot's records rebuild the releases, the rolling one in the view, without repeating versions")
    func snapshots() throws {
        var state = Self.state()
        state.apply(Self.halt())
        state.apply(
            .releasePut(
                Release(
                    screen: "home", baseVersion: 3,
                    candidate: ScreenVersion(name: "home", version: 4, tree: Self.candidateTree, publishedAt: 5),
                    qaCohort: "qa", healthGuard: ReleaseGuard(maxErrorRate: 0.1, minUnits: 3),
                    steps: [Release.Step(at: 5, actor: "ci", action: .start(basisPoints: 250))])))
        var rebuilt = HubState(keepVersions: 16)
        for record in state.snapshotRecords() {
            // Through the journal's form, as a restart reads it.
            rebuilt.apply(try HubRecord(json: record.json))
        }
        #expect(rebuilt.view.screens["home"]?.map(\.version) == [1, 2, 3])
        #expect(rebuilt.releases["home"]?.map(\.id) == ["r-2", "r-4"])
        #expect(rebuilt.release("home", "r-2")?.steps == state.release("home", "r-2")?.steps)
        let rolling = try #require(rebuilt.rollingRelease("home"))
        #expect(rolling.basisPoints == 250 && rolling.qaCohort == "qa" && rolling.healthGuard.minUnits == 3)
        #expect(rebuilt.nextVersion(of: "home") == 5)
    }

    @Test("a hub reloading the shared state reloads a screen whose release moved, never publishing a candidate")
    func reloading() throws {
        func reload(from before: HubState, to after: HubState) -> [HubChange] {
            let (changes, _) = before.changes(toReach: after)
            var loop = before.view
            for change in changes { loop.apply(change, keepVersions: 16) }
            #expect(loop.screens["home"]?.map(\.version) == after.view.screens["home"]?.map(\.version))
            #expect(loop.releases["home"]?.id == after.view.releases["home"]?.id)
            for change in changes {
                if case .screenPublished(let version, _) = change { Issue.record("published \(version.version)") }
            }
            return changes
        }
        func isReload(_ changes: [HubChange], release: String?) -> Bool {
            guard changes.count == 1, case .screenReloaded("home", _, let rolling) = changes[0] else { return false }
            return rolling?.id == release
        }
        let idle = Self.state(releasing: nil), rolling = Self.state()
        var halted = rolling
        halted.apply(Self.halt())
        // The release this hub has rolling was halted meanwhile.
        #expect(isReload(reload(from: rolling, to: halted), release: nil))
        // A release started meanwhile.
        #expect(isReload(reload(from: idle, to: rolling), release: "r-2"))
        // A release started and was halted meanwhile: its candidate reaches nobody.
        #expect(isReload(reload(from: idle, to: halted), release: nil))
        // This hub's release was halted and the next one started meanwhile.
        var next = halted
        next.apply(
            .releasePut(
                Release(
                    screen: "home", baseVersion: 3,
                    candidate: ScreenVersion(name: "home", version: 4, tree: Self.candidateTree, publishedAt: 5),
                    qaCohort: nil, healthGuard: .standard,
                    steps: [Release.Step(at: 5, actor: "ci", action: .start(basisPoints: 100))])))
        #expect(isReload(reload(from: rolling, to: next), release: "r-4"))
        // Nothing moved: nothing to do; a plain publish is still published.
        #expect(reload(from: rolling, to: rolling).isEmpty)
        var published = halted
        published.apply(.screenPublished(ScreenVersion(name: "home", version: 4, tree: .object([:]), publishedAt: 6)))
        let (plain, _) = halted.changes(toReach: published)
        #expect(plain.count == 1)
        if case .screenPublished(let version, _)? = plain.first {
            #expect(version.version == 4)
        } else {
            Issue.record("expected a publish: \(plain)")
        }
    }
}
