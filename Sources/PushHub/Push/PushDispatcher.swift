/// The hub's silent pushes (DESIGN §17): one channel per configured provider, each with its own
/// HTTP/2 connection driven by the control plane's loop. A sync made on this hub with `push`
/// hands its devices here; what happens to each push is counted in the sync's receipts
/// (`pushed`, `push_failed`) and in `/metrics`.
///
/// Invariants: only the hub that made a sync pushes it (the one whose admin API took it), so a
/// scaled-out service pushes each device once; a provider's pushes never wait for another's.
/// Called on the control plane's thread only.
final class PushDispatcher {
    private var channels: [PushProvider: PushChannel] = [:]
    /// The connections the control plane's loop drives.
    var sources: [LoopSource] { links }
    private let links: [HTTP2Link]
    private let metrics: PushMetrics

    /// Why the push setup cannot start (a credential file that cannot be used).
    struct SetupError: Error, CustomStringConvertible {
        var description: String
    }

    /// The providers `settings` configures (nil when none is), their credentials read now.
    init?(settings: PushSettings, metrics: PushMetrics, now: UInt64) throws(SetupError) {
        guard settings.apnsConfigured || settings.fcmConfigured else { return nil }
        self.metrics = metrics
        let tls: TLSClientContext
        do {
            tls = try TLSClientContext(caFile: settings.caFile, alpn: ["h2"])
        } catch {
            throw SetupError(description: "--push-ca: \(error)")
        }
        func link(_ name: String, host: String, port: UInt16, tls: TLSClientContext?) -> HTTP2Link {
            let options = HTTP2Link.Options(host: host, port: port, tls: tls, name: name)
            return HTTP2Link(options: options, now: now)
        }
        var links: [HTTP2Link] = []
        var channels: [PushProvider: PushChannel] = [:]
        if let key = settings.apnsKey, let keyID = settings.apnsKeyID, let team = settings.apnsTeam {
            let credentials: APNsCredentials
            do {
                credentials = try APNsCredentials(key: key, keyID: keyID, team: team, endpoint: settings.apnsEndpoint)
            } catch {
                throw SetupError(description: "--apns-key: \(error)")
            }
            let apns = link("apns", host: settings.apnsEndpoint.host, port: settings.apnsEndpoint.port, tls: tls)
            links.append(apns)
            channels[.apns] = PushChannel(
                credentials: credentials, transport: apns, metrics: metrics, capacity: settings.maxQueued)
        }
        if let path = settings.fcmCredentials {
            let account: FCMServiceAccount
            do {
                account = try FCMServiceAccount(file: path)
            } catch {
                throw SetupError(description: "--fcm-credentials: \(error)")
            }
            let fcm = link("fcm", host: settings.fcmEndpoint.host, port: settings.fcmEndpoint.port, tls: tls)
            links.append(fcm)
            // The token endpoint gets its own connection unless it is FCM's host.
            var tokenLink = fcm
            if account.tokenAuthority != settings.fcmEndpoint.authority || account.tokenScheme != "https" {
                guard let endpoint = PushEndpoint(authority: account.tokenAuthority) else {
                    throw SetupError(description: "--fcm-credentials: token_uri \(account.tokenURI) has no usable host")
                }
                tokenLink = link(
                    "fcm-oauth", host: endpoint.host, port: endpoint.port,
                    tls: account.tokenScheme == "https" ? tls : nil)
                links.append(tokenLink)
            }
            let credentials = FCMCredentials(
                account: account, endpoint: settings.fcmEndpoint, tokenTransport: tokenLink)
            channels[.fcm] = PushChannel(
                credentials: credentials, transport: fcm, metrics: metrics, capacity: settings.maxQueued)
        }
        self.links = links
        self.channels = channels
    }

    /// A push due this long after its sync (spread) asks first whether its device is online.
    static let onlineCheckAfter: UInt64 = 1_000_000_000

    /// The provider said a device's token is dead.
    var onTokenInvalid: ((DeviceKey, String) -> Void)? {
        didSet { for channel in channels.values { channel.onTokenInvalid = onTokenInvalid } }
    }

    /// Asks which devices are connected now (retries of syncs pushed to offline devices).
    var checkOnline: (([DeviceKey], @escaping (Set<DeviceKey>) -> Void) -> Void)? {
        didSet { for channel in channels.values { channel.checkOnline = checkOnline } }
    }

    /// Queues a push of `sync` to each of `devices`; with `spread`, the i-th of n is due at
    /// now + spread × i / n (DESIGN §5 applies to pushes too, `SpreadSchedule`). The jobs are made
    /// `maxExpandedPerTick` at a time from the next tick on, so the sync is answered first and a
    /// sync to 100,000 devices never holds the loop (the bench measured 120–210 ms before).
    /// - Returns: how many pushes the sync makes.
    @discardableResult
    func push(_ sync: Sync, to devices: [PushDevice], now: UInt64) -> Int {
        guard !devices.isEmpty else { return 0 }
        expansions.append(Expansion(sync: sync, devices: devices, start: now))
        return devices.count
    }

    /// A sync's pushes still to be made into jobs.
    private struct Expansion {
        let sync: Sync
        let devices: [PushDevice]
        /// When the sync was pushed: its spread counts from there.
        let start: UInt64
        var next = 0
    }

    private var expansions: [Expansion] = []
    /// Jobs made per tick at most.
    static let maxExpandedPerTick = 5000

    /// Makes the next `maxExpandedPerTick` jobs, oldest sync first — of syncs pushed before this
    /// tick (a tick's answers go out first) — then lets the channels send.
    private func expand(now: UInt64) {
        var budget = Self.maxExpandedPerTick
        while budget > 0, let first = expansions.first, first.start < now {
            let sync = expansions[0].sync
            let devices = expansions[0].devices
            let start = expansions[0].start
            let spread = UInt64(sync.spreadMilliseconds) * 1_000_000
            let end = min(devices.count, expansions[0].next + budget)
            for index in expansions[0].next..<end {
                let device = devices[index]
                guard let channel = channels[device.provider] else {
                    metrics.count(.unavailable, device.provider)
                    sync.receipts.pushFailed.add(1, ordering: .relaxed)
                    continue
                }
                let delay = SpreadSchedule.delay(index: index, of: devices.count, over: spread)
                var job = PushJob(sync: sync, device: device)
                // A later share of a sync for offline devices asks first whether the device connected
                // meanwhile (it then had the sync over its socket), as a retry does.
                job.checksOnlineFirst = sync.push == .offline && delay >= Self.onlineCheckAfter
                channel.add(job, at: start + delay, now: now)
            }
            budget -= end - expansions[0].next
            expansions[0].next = end
            if end == devices.count { expansions.removeFirst() }
        }
        for channel in channels.values { channel.tick(now: now) }
    }

    func tick(now: UInt64) { expand(now: now) }

    var nextDeadline: UInt64? {
        expansions.isEmpty ? channels.values.compactMap(\.nextDeadline).min() : 0
    }

    /// Closes the connections (the hub stops): what waits is not sent.
    func close() {
        for link in links { link.abandon() }
    }
}
