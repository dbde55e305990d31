/// What a loop drives for its owner and what the owner closes when the loop stops: the
/// control plane's outbound HTTP client (or a test's stand-in).
protocol LoopDriven: AnyObject {
    /// Fixed for the object's life: an event loop's sources are fixed when it starts.
    var sources: [LoopSource] { get }
    /// Ends everything under way (its callbacks are called); nothing starts after.
    func close()
}
