extension Duration {
    /// Whole nanoseconds (negative durations count as zero): for arithmetic on `MonotonicClock`
    /// instants and for socket timeouts.
    public var nanoseconds: UInt64 {
        let (seconds, attoseconds) = components
        return UInt64(max(0, seconds)) * 1_000_000_000 + UInt64(max(0, attoseconds) / 1_000_000_000)
    }

    /// Seconds as a `Double` (for Dispatch deadlines and `Thread.sleep`).
    public var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
