/// What a session reports of a release (DESIGN §15): that it was served the candidate, and then
/// what the app said of it — `rendered`, or `render_error`. Each once per session and release,
/// and only while the release rolls and about its candidate (an error from another version counts
/// nowhere). A report need not come from a session that was served the candidate here: an app
/// reports what it drew after it reconnects, before it subscribes again. The tally counts it only
/// for a unit the log says was served (`ReleaseHealth`), so a client never exposed counts nowhere.
extension Session {
    /// The session's subscription to `screen` is now at `version`: when that is the candidate of
    /// the screen's rolling release, the unit was served it.
    func noteReleaseServed(
        _ ready: ReadySession, _ screen: String, _ version: ScreenVersion, view: HubView, nowMilliseconds: Int,
        out: inout [Action]
    ) {
        guard let release = view.releases[screen], release.candidate === version else { return }
        report(ready, release, .served, nowMilliseconds: nowMilliseconds, out: &out)
    }

    /// The app reported `outcome` for `version` of `screen`.
    func reportRelease(
        _ ready: ReadySession, screen: String, version: Int, _ outcome: ResultEvent.ReleaseOutcome, view: HubView,
        nowMilliseconds: Int, out: inout [Action]
    ) {
        guard let release = view.releases[screen], release.candidate.version == version else { return }
        report(ready, release, outcome, nowMilliseconds: nowMilliseconds, out: &out)
    }

    private func report(
        _ ready: ReadySession, _ release: Release, _ outcome: ResultEvent.ReleaseOutcome, nowMilliseconds: Int,
        out: inout [Action]
    ) {
        let flag: ReleaseReports
        switch outcome {
        case .served: flag = .served
        case .rendered: flag = .rendered
        case .errored: flag = .errored
        }
        let key = Self.releaseKey(release)
        guard ready.memory.releases[key]?.contains(flag) != true else { return }
        ready.memory.releases[key, default: []].insert(flag)
        let report = ResultEvent.ReleaseReport(screen: release.screen, release: release.id, outcome: outcome)
        out.append(
            .result(ResultEvent(.release(report), unit: ready.unit, at: nowMilliseconds), sessionWasServed: true))
    }

    private static func releaseKey(_ release: Release) -> String { release.screen + "|" + release.id }
}
