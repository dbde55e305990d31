/// The push registrations the hub holds (DESIGN §17), part of the control plane's state: one per
/// device, replaced when the device registers another token, removed when it signs out or the
/// provider says the token is dead. Durable (journaled), and shared by the hubs of a cluster.
///
/// Invariant: `byUser[u]` holds exactly the keys of `devices` whose user is `u`.
struct DeviceRegistry {
    private(set) var devices: [DeviceKey: PushDevice] = [:]
    private var byUser: [String: Set<DeviceKey>] = [:]

    var count: Int { devices.count }

    mutating func set(_ device: PushDevice) {
        devices[device.key] = device
        if let user = device.user { byUser[user, default: []].insert(device.key) }
    }

    /// Removes `key`'s registration; with `token`, only while that is still its token (a dead
    /// token reported after the device registered a new one leaves the new one alone).
    mutating func remove(_ key: DeviceKey, token: String?) {
        guard let device = devices[key], token == nil || device.token == token else { return }
        devices[key] = nil
        if let user = key.user {
            byUser[user]?.remove(key)
            if byUser[user]?.isEmpty == true { byUser[user] = nil }
        }
    }

    /// The devices of `user`, in a stable order.
    func devices(of user: String) -> [PushDevice] {
        (byUser[user] ?? []).compactMap { devices[$0] }.sorted { $0.device < $1.device }
    }

    /// The registered devices `target` reaches (DESIGN §5), judged on what each registered with.
    /// A target naming users looks at their devices only; a cohort or everyone at every device.
    func devices(for target: Target, in view: HubView) -> [PushDevice] {
        let candidates: [PushDevice]
        switch target.scope {
        case .user(let user): candidates = devices(of: user)
        case .users(let users): candidates = users.sorted().flatMap { devices(of: $0) }
        case .cohort, .all: candidates = Array(devices.values)
        }
        return candidates.filter { view.matches(target, $0.attributes) }
    }
}
