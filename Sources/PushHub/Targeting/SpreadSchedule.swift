/// A sync's `spread` (DESIGN §5): the i-th of n deliveries — over sockets, or as silent pushes —
/// is due at start + spread × i / n, so n re-fetches arrive evenly over the window.
enum SpreadSchedule {
    /// The delay (ns) of delivery `index` of `count` over `spread` ns; exact and without overflow
    /// for any spread and count (spread × index is computed in 128 bits).
    static func delay(index: Int, of count: Int, over spread: UInt64) -> UInt64 {
        guard count > 1, index > 0 else { return 0 }
        // index < count, so the quotient is below `spread` and fits.
        return UInt64(count).dividingFullWidth(spread.multipliedFullWidth(by: UInt64(index))).quotient
    }
}
