/// `GET /v1/devices` (DESIGN §17): the devices registered for silent pushes — a user's, one
/// device's, or all of them — with their tokens' providers and the tokens' last characters,
/// never a whole token (it is a credential to push to that phone).
struct DeviceRoutes: AdminHandlers {
    let call: AdminCall

    init(_ call: AdminCall) { self.call = call }

    /// 100 devices unless asked for more (a user has a handful; all of them is for a look).
    static let defaultLimit = 100
    static let maxLimit = 10_000

    /// `GET /v1/devices[?user=U][&device=D][&limit=N]`: `{devices:[…], count}`, `count` being how
    /// many match (the list stops at `limit`), sorted by user then device.
    func list() throws(AdminError) {
        let limit = try call.limit(default: Self.defaultLimit, max: Self.maxLimit)
        let registry = call.state.devices
        let device = call.query("device")
        var matching: [PushDevice]
        if let user = call.query("user") {
            matching = registry.devices(of: user).filter { device == nil || $0.device == device }
        } else if let device {
            matching = registry.all.filter { $0.device == device }
        } else {
            matching = registry.all
        }
        // The first `limit` in order, without sorting every registration (a hub may hold millions).
        let shown = matching.smallest(limit) { ($0.user ?? "", $0.device) < ($1.user ?? "", $1.device) }
        call.reply.json(
            200, .object(["devices": .array(shown.map(\.json)), "count": .number(Double(matching.count))]))
    }
}

extension Array {
    /// The `count` smallest elements by `areInIncreasingOrder`, in order: one pass keeping the
    /// smallest so far sorted (n log count comparisons; an element is inserted only when it is
    /// among them), for a page of a large unordered collection.
    func smallest(_ count: Int, by areInIncreasingOrder: (Element, Element) -> Bool) -> [Element] {
        guard count < self.count else { return sorted(by: areInIncreasingOrder) }
        var kept: [Element] = []
        kept.reserveCapacity(count + 1)
        for element in self {
            if kept.count == count, let last = kept.last, !areInIncreasingOrder(element, last) { continue }
            var low = 0
            var high = kept.count
            while low < high {
                let middle = (low + high) / 2
                if areInIncreasingOrder(element, kept[middle]) { high = middle } else { low = middle + 1 }
            }
            kept.insert(element, at: low)
            if kept.count > count { kept.removeLast() }
        }
        return kept
    }
}
