/// The experiments' results on the control plane (DESIGN §6 "Goals and results"): the tally
/// folded from the results log, and the events of the current tick on their way to it.
///
/// Events a loop reports go to the log at the end of the tick (one append), unless they certainly
/// change nothing (`record`): a unit's second session served the same variant; a goal event of a
/// unit never served, so an app's events outside experiments are not kept. The tally counts an event once the log hands it back (`ResultsLog`): at once for the
/// data dir, after the round trip through Redis when scaled out.
///
/// Releases' reports (DESIGN §15) share the log: `releases` folds them, and `releaseReported`
/// hears of each report as it is folded (the control plane judges the release's guard there).
///
/// Invariant: `tally` and `releases` are the fold of everything the log delivered, in its order.
final class ExperimentResults {
    let log: any ResultsLog
    private(set) var tally = ResultsTally()
    private(set) var releases = ReleaseTally()
    /// Called after a release event was folded, with the release it is about.
    var releaseReported: ((_ screen: String, _ release: String) -> Void)?
    private var pending: [ResultEvent] = []
    /// The units of `pending`.
    private var unitsThisTick = Set<Int>()
    private let metrics: Metrics

    init(log: any ResultsLog, metrics: Metrics, now: UInt64) {
        self.log = log
        self.metrics = metrics
        log.deliver = { [unowned self] events in
            for event in events {
                let unit = ResultsTally.unitKey(event.unit)
                if let release = self.releases.fold(event, unitKey: unit) {
                    self.releaseReported?(release.screen, release.release)
                } else {
                    self.tally.fold(event, unitKey: unit)
                }
            }
        }
        log.load(now: now)
    }

    /// A loop reported `event`. Dropped only when it certainly changes nothing: a repeat of what
    /// the tally holds for a unit with nothing of its own on the way (an event of this tick, or
    /// one appended and not yet read back, may change the unit first: an override and its
    /// removal within one round trip); a goal of a unit no session here was served, once the
    /// tally holds everything kept (while it loads, the unit may be in the part not yet read).
    func record(_ event: ResultEvent, sessionWasServed: Bool) {
        let unit = ResultsTally.unitKey(event.unit)
        let settled = !log.hasUndelivered && !unitsThisTick.contains(unit)
        if settled && (tally.isRepeat(event, unitKey: unit) || releases.isRepeat(event, unitKey: unit)) { return }
        if case .goal = event.kind, !sessionWasServed, log.isLoaded, settled, !tally.hasServed(unitKey: unit) { return }
        pending.append(event)
        unitsThisTick.insert(unit)
    }

    /// Appends the tick's events; lets the log do its work.
    func tickEnded(now: UInt64) {
        if !pending.isEmpty {
            metrics.resultEvents.add(pending.count, ordering: .relaxed)
            log.append(pending, now: now)
            pending.removeAll(keepingCapacity: true)
            unitsThisTick.removeAll(keepingCapacity: true)
        }
        log.tick(now: now)
    }

    var nextDeadline: UInt64 { log.nextDeadline }

    /// Calls `done` once the tally holds every event recorded before (`failure`: the log could
    /// not be read, and the tally may lack the newest).
    func whenCurrent(now: UInt64, done: @escaping (_ failure: String?) -> Void) {
        if !pending.isEmpty { tickEnded(now: now) }
        log.catchUp(now: now, done: done)
    }
}
