/// Silent pushes (DESIGN §17) from the control plane's side: a sync made here hands its offline
/// devices to the dispatcher; the dispatcher's dead tokens become journal records, and its
/// questions about who is connected become scatter-gathers.
extension ControlPlane {
    /// Wires the dispatcher to the state and the loops (at start).
    func attachPushes() {
        scatter.forPeers = { [unowned self] answers in self.registeredOnly(answers) }
        guard let pushes else { return }
        pushes.onTokenInvalid = { [unowned self] key, token in
            self.forget(key, token: token)
        }
        pushes.checkOnline = { [unowned self] keys, done in
            self.gather(.devicesOnline(keys), now: MonotonicClock.now()) { answers, _ in
                done(answers.connectedDevices)
            }
        }
    }

    /// The registered devices `sync` pushes to: those its target reaches, less those that were
    /// connected when it was made (`answers`, the loops' and the other hubs') unless it pushes
    /// `always`.
    func pushedDevices(_ sync: Sync, connected answers: [LoopAnswer]) -> [PushDevice] {
        let devices = committed.devices.devices(for: sync.target, in: committed.view)
        guard sync.push == .offline else { return devices }
        let online = answers.connectedDevices
        return devices.filter { !online.contains($0.key) }
    }

    /// Pushes `sync` to the devices it is for. - Returns: how many pushes were queued.
    func push(_ sync: Sync, connected answers: [LoopAnswer]) -> Int {
        guard let pushes, sync.push != .none else { return 0 }
        return pushes.push(sync, to: pushedDevices(sync, connected: answers), now: MonotonicClock.now())
    }

    /// `answers` with the devices of `.syncTargets` cut to those registered for pushes: the only
    /// ones the hub that made the sync asks about, so another hub's answer stays as small as its
    /// registered devices online (not every connection it has).
    func registeredOnly(_ answers: [LoopAnswer]) -> [LoopAnswer] {
        answers.map { answer in
            guard case .syncTargets(let count, let devices) = answer else { return answer }
            return .syncTargets(count: count, devices: devices.filter { committed.devices[$0] != nil })
        }
    }

    /// The provider said `key`'s token is dead: its registration goes, unless it changed since.
    private func forget(_ key: DeviceKey, token: String) {
        guard state.devices[key]?.token == token else { return }
        let retry = { [unowned self] in self.forget(key, token: token) }
        mutate([.pushDeviceRemoved(key, token: token)], retry: retry) { result in
            if case .failure(let error) = result {
                Log.error("a dead push token could not be forgotten", [("error", error.message)])
            }
        }
    }
}
