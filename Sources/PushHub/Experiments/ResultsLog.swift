/// Where experiment result events are kept (DESIGN §6 "Goals and results"): the data dir's
/// exposure log (`LocalResultsLog`), a stream every hub shares in Redis (`SharedResultsLog`), or
/// memory only. Its owner, `ExperimentResults`, appends what the loops report and folds what the
/// log hands back (`deliver`), so a tally is a function of the log alone: the same on every hub
/// that reads it, and the same after a restart.
///
/// Contract: `deliver` gets every event once, in the log's order, the kept ones first (from
/// `load`); `catchUp` calls back once every event appended before it was delivered (or the log
/// cannot be read now: with the reason). Everything runs on the control plane's thread.
protocol ResultsLog: AnyObject {
    /// Where the results live, as the results answer says it: "data-dir", "redis" or "memory".
    var kept: String { get }
    /// Set by the owner before `load`.
    var deliver: (([ResultEvent]) -> Void)? { get set }
    /// Everything the log kept before this hub started has been delivered.
    var isLoaded: Bool { get }
    /// Events this hub appended that have not come back through `deliver` yet (while there are,
    /// the tally lags what this hub reported).
    var hasUndelivered: Bool { get }
    /// Starts handing over what the log kept (at once for a file, over the next ticks for Redis).
    func load(now: UInt64)
    func append(_ events: [ResultEvent], now: UInt64)
    func catchUp(now: UInt64, done: @escaping (_ failure: String?) -> Void)
    func tick(now: UInt64)
    var nextDeadline: UInt64 { get }
}
