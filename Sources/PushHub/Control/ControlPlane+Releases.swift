/// Releases on the control plane (DESIGN §15): the guard judged on every report the results log
/// folds, a halt made as any change (durable first, then to the loops), and the release figures
/// of `/metrics`.
///
/// Why one halt, journaled once, however many hubs judge: every hub folds the same results log
/// in the same order, so each sees the guard trip at the same report; each then asks for the
/// halt of a release that `state` shows rolling. The shared journal takes one of those entries;
/// the others lose the race, and made again after catching up they find the release halted and
/// record nothing. Alone, the halt is in `state` at once, so a later report finds it halted.
extension ControlPlane {
    /// Judges the guard of `screen`'s release `id` on the health folded so far; halts it when the
    /// guard trips.
    func judgeRelease(screen: String, id: String) {
        guard let release = state.rollingRelease(screen), release.id == id,
            let health = results.releases.health(screen: screen, release: id),
            let reason = release.healthGuard.trips(on: health.counts)
        else { return }
        let step = Release.Step(
            at: WallClock.nowMilliseconds(), actor: Release.guardActor,
            action: .halt(
                Release.Halt(reason: reason, numbers: health.counts, revertVersion: state.nextVersion(of: screen))))
        let retry = { [unowned self] in self.judgeRelease(screen: screen, id: id) }
        mutate([.releaseStepped(screen: screen, release: id, step)], retry: retry) { [unowned self] result in
            switch result {
            case .success:
                metrics.releaseHaltsByGuard.add(1, ordering: .relaxed)
                Log.warning(
                    "release halted by its guard",
                    [("screen", screen), ("release", id), ("reason", reason)])
                audit.append(
                    AuditRing.Entry(
                        at: step.at, token: Release.guardActor, method: "POST",
                        path: "/v1/screens/\(screen)/releases/\(id)/halt", status: 200, error: nil,
                        detail: reason))
            case .failure(let error):
                // Asked for again in a second: no later report may come to trip the guard again.
                Log.error("a guard's halt could not be made durable", [("release", id), ("error", error.message)])
                releasesJudgedAgainAt = MonotonicClock.now() + Self.judgeAgainAfter
            }
        }
    }

    static let judgeAgainAfter: UInt64 = 1_000_000_000

    /// Judges every rolling release once (at start: the log may hold reports that tripped a
    /// guard before the hub stopped; after a halt that failed).
    func judgeRollingReleases() {
        for release in state.view.releases.values { judgeRelease(screen: release.screen, id: release.id) }
    }

    /// The release figures of `/metrics`: halts by reason, and the health of each rolling release.
    func releaseMetricsText() -> String {
        var text =
            "# HELP pushhub_release_halts_total Releases halted, by who halted them.\n"
            + "# TYPE pushhub_release_halts_total counter\n"
            + "pushhub_release_halts_total{reason=\"guard\"} \(metrics.releaseHaltsByGuard.load(ordering: .relaxed))\n"
            + "pushhub_release_halts_total{reason=\"manual\"} \(metrics.releaseHaltsManual.load(ordering: .relaxed))\n"
        let rolling = committed.view.releases.values.sorted { $0.screen < $1.screen }
        let gauges: [(String, String, (ReleaseHealth.Counts) -> Int)] = [
            ("pushhub_release_exposed_units", "Units served the candidate of each rolling release.", \.exposed),
            ("pushhub_release_rendered_units", "Exposed units that rendered the candidate.", \.rendered),
            (
                "pushhub_release_errored_units", "Exposed units that reported a render error for the candidate.",
                \.errored
            ),
        ]
        for (name, help, value) in gauges {
            text += PrometheusText.header(name, "gauge", help)
            for release in rolling {
                let counts = results.releases.health(screen: release.screen, release: release.id)?.counts ?? .init()
                text += "\(name){screen=\"\(PrometheusText.escaped(release.screen))\",release=\"\(release.id)\"} \(value(counts))\n"
            }
        }
        return text
    }
}
