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
        var devices: [PushDevice]
        if let user = call.query("user") {
            devices = registry.devices(of: user)
        } else {
            devices = registry.devices.values.sorted { ($0.user ?? "", $0.device) < ($1.user ?? "", $1.device) }
        }
        if let device = call.query("device") { devices = devices.filter { $0.device == device } }
        call.reply.json(
            200,
            .object(["devices": .array(devices.prefix(limit).map(\.json)), "count": .number(Double(devices.count))]))
    }
}
