/// Names one scatter-gather: the control plane asks every client loop and waits for each answer.
typealias GatherID = UInt64

/// What the control plane asks every client loop about its own connections (DESIGN §9: queries
/// over connections are scatter-gather, exact on a quiet hub).
enum LoopQuery: Sendable {
    /// The connections (and distinct users) `target` reaches on the loop (dry runs).
    case reach(Target)
    /// How many subscribers of `screen` see it as each render target (a publish dry run).
    case renderTargets(screen: String)
    /// Subscribers per screen.
    case subscribers
    /// The signed-in connections, of `user` only when given.
    case clients(user: String?)
    /// How many subscribers a release's percent would expose (a release's dry run).
    case releaseReach(ReleaseReach)
    /// The signed-in connections counted by what decides their capabilities (DESIGN §16).
    case clientBuilds
    /// Which of these devices have a signed-in connection (a push retry, DESIGN §17).
    case devicesOnline([DeviceKey])
}

/// A release's exposure to ask the loops about (DESIGN §15 dry runs): its screen, id and QA
/// cohort, the percent asked (`basisPoints`) and the one it has (nil: not started).
struct ReleaseReach: Sendable {
    var screen: String
    var release: String
    var qaCohort: String?
    var basisPoints: Int
    var fromBasisPoints: Int?
}

/// A client loop's answer to a change with a reply or to a query.
enum LoopAnswer: Sendable {
    /// A publish: subscribers whose rendered tree changed, and the renditions of the new version
    /// among the loop's subscribers.
    case published(sent: Int, renditions: Set<RenditionKey>)
    /// A count: subscribers told a screen is gone, or connections a sync targeted.
    case count(Int)
    /// A sync pushed to offline devices (DESIGN §17): the connections it targeted and their
    /// devices, which are online and so not pushed.
    case syncTargets(count: Int, devices: [DeviceKey])
    case reach(connections: Int, users: Set<String>)
    case renderTargets([RenderTarget: Int])
    case subscribers([String: Int])
    case clients([ClientAttributes])
    /// Subscribers of the screen, those the asked percent exposes, and those exposed already.
    case releaseReach(subscribers: Int, exposed: Int, exposedBefore: Int)
    case clientBuilds([ClientBuild: Int])
    /// The devices asked about that have a signed-in connection here.
    case devicesOnline([DeviceKey])
    /// Scaled out: another hub's receipts of the syncs asked about, by seq (its control plane
    /// answers, not its loops).
    case receipts([Int: ReceiptCounts])
}

extension [LoopAnswer] {
    /// The `.clientBuilds` answers summed.
    var clientBuilds: [ClientBuild: Int] {
        var total: [ClientBuild: Int] = [:]
        for case .clientBuilds(let counts) in self { total.merge(counts) { $0 &+ $1 } }
        return total
    }

    /// The sum of the `.count` answers (a sync's targets, a deletion's subscribers).
    var totalCount: Int {
        var total = 0
        for answer in self {
            switch answer {
            case .count(let count), .syncTargets(let count, _): total += count
            default: continue
            }
        }
        return total
    }

    /// The devices the `.syncTargets` (connected when the sync was made) and `.devicesOnline`
    /// answers name.
    var connectedDevices: Set<DeviceKey> {
        var devices = Set<DeviceKey>()
        for answer in self {
            switch answer {
            case .syncTargets(_, let keys), .devicesOnline(let keys): devices.formUnion(keys)
            default: continue
            }
        }
        return devices
    }
}

/// What a client loop tells the control plane.
enum LoopEvent: Sendable {
    case answer(GatherID, LoopAnswer)
    /// A sticky experiment's first assignment of a unit, to make durable (first writer wins).
    case stickyAssigned(experiment: String, unit: String, variant: String)
    /// A result event for the experiments' results (DESIGN §6); `sessionWasServed`: the session
    /// that reported a goal event was served some variant (so its unit counts even if the tally
    /// has not heard of it yet).
    case result(ResultEvent, sessionWasServed: Bool)
    /// A loop started (true) or stopped (false) having subscribers of `screen` seen as `target`.
    case targetInUse(screen: String, RenderTarget, Bool)
    /// A client registered a push token (DESIGN §17), or removed its device's registration.
    case pushDeviceRegistered(PushDevice)
    case pushDeviceRemoved(DeviceKey)
    /// A client's `render_error` (DESIGN §18: `client.render_error` webhooks).
    case renderError(RenderErrorReport)
    /// A hello's token names a kid no key has, and the hub fetches a JWKS (DESIGN §18): the loop
    /// parked it and waits for `LoopCommand.keysRefreshed` (one question per answer).
    case unknownKeyID(String)
    /// A client loop's thread has finished (after a shutdown's drain, or failing to start).
    case clientLoopStopped
}

/// One scatter-gather in flight on the control plane: the answers so far and what to do with
/// them once every loop and, scaled out, every other live hub has answered, or the deadline
/// has passed.
///
/// Scaled out, which hubs must answer is learnt from Redis when the question goes out (the live
/// hubs registered at that moment, `HubRegistry.liveIDsCommand`), not from this hub's last
/// heartbeat, which can be 2 s old: a hub that joined since then was not waited for, and its
/// clients went uncounted (issue 24: `targeted_online: 1` for a user on two hubs). Answers are
/// kept per hub, so one that arrives before the list is known still counts.
///
/// Invariant: `finish` runs exactly once; answers that arrive after it are ignored; it finishes
/// complete only when every loop and every awaited hub has answered.
final class Gather {
    /// Client loops yet to answer.
    private var loopsAwaited: Int
    /// The other hubs that must answer (nil: not known yet, `expectRemote` tells).
    private var remoteAwaited: Set<String>?
    private var remoteAnswered: Set<String> = []
    /// When it finishes with what arrived; `.max` until the change it waits for is durable.
    var deadline: UInt64
    private(set) var answers: [LoopAnswer] = []
    private var isFinished = false
    private let finish: (_ answers: [LoopAnswer], _ complete: Bool) -> Void

    /// - Parameter remote: the other hubs to wait for, or nil when they are learnt later.
    init(loops: Int, remote: Set<String>?, deadline: UInt64, finish: @escaping ([LoopAnswer], Bool) -> Void) {
        loopsAwaited = loops
        remoteAwaited = remote
        self.deadline = deadline
        self.finish = finish
    }

    /// Adds a loop's answer. - Returns: whether the gather is complete (and finished).
    func add(_ answer: LoopAnswer) -> Bool {
        answers.append(answer)
        loopsAwaited -= 1
        return finishIfComplete()
    }

    /// Adds another hub's answers (its loops', merged there); a hub counts once.
    /// - Returns: as `add`.
    func addRemote(from hub: String, _ more: [LoopAnswer]) -> Bool {
        guard remoteAnswered.insert(hub).inserted else { return isFinished }
        answers += more
        return finishIfComplete()
    }

    /// The other hubs that must answer, now known. - Returns: as `add`.
    func expectRemote(_ hubs: Set<String>) -> Bool {
        remoteAwaited = hubs
        return finishIfComplete()
    }

    private func finishIfComplete() -> Bool {
        guard !isFinished, loopsAwaited <= 0, let remoteAwaited, remoteAwaited.isSubset(of: remoteAnswered) else {
            return isFinished
        }
        isFinished = true
        finish(answers, true)
        return true
    }

    /// The deadline passed: finish with what arrived.
    func expire() {
        guard !isFinished else { return }
        isFinished = true
        finish(answers, false)
    }
}
