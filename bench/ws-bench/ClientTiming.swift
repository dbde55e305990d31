import Foundation
import PushHub
import PushHubClient

/// The Swift client's cost of keeping the 10,000-node screen of `DiffTiming` current: the time
/// from a message reaching `PushHubClient` (as its transport hands it over) to the tree callback —
/// parse, RFC 6902 apply, RFC 8785 form + SHA-256 check, the stored copy written, the callback.
/// The hub's own messages (`ServerMessage`) are fed through a transport that stands in for the
/// socket, so the figure is the client's work alone (issue 13's "the same in Swift").
enum ClientTiming {
    /// Stands in for the socket: the bench hands messages to `events`.
    final class FeedTransport: ClientTransport, @unchecked Sendable {
        private let opened = DispatchSemaphore(value: 0)
        private var events: (@Sendable (TransportEvent) -> Void)?

        func open(_ request: TransportRequest, events: @escaping @Sendable (TransportEvent) -> Void) -> any TransportConnection {
            self.events = events
            opened.signal()
            return Sink()
        }

        func get(_ request: TransportRequest, completion: @escaping @Sendable (Result<HTTPAnswer, TransportError>) -> Void) {
            completion(.failure(TransportError("no HTTP in this bench")))
        }

        /// Hands `text` to the client as a received message.
        func feed(_ text: String) {
            if events == nil { opened.wait() }
            events?(.text(text))
        }

        struct Sink: TransportConnection {
            func send(text: String) {}
            func close(code: UInt16, reason: String) {}
        }
    }

    struct Timings {
        var snapshotMillis: Double
        var patchMedianMillis: Double
        var patchP95Millis: Double
        var applyOnlyMedianMillis: Double
        var hashOnlyMedianMillis: Double
        var snapshotBytes: Int
    }

    static func run(patches: Int) -> Timings {
        let trees = [false, true].map { DiffTiming.tree(sections: 100, items: 99, changed: $0) }
        let transport = FeedTransport()
        let delivered = DispatchSemaphore(value: 0)
        let client = PushHubClient(
            url: HubURL("ws://127.0.0.1:9/v1/connect")!, credentials: .device("bench"), transport: transport)
        client.subscribe("big") { _, _ in delivered.signal() }
        transport.feed(text(ServerMessage.welcome(session: "s-1", user: nil, heartbeatSeconds: 25, syncSeq: 0, epoch: "e-bench")))

        var cache = RenditionCache()
        let first = ScreenVersion(name: "big", version: 1, tree: trees[0], publishedAt: 0)
        let snapshot = text(ServerMessage.snapshot(screen: "big", version: 1, rendered: cache.rendered(first, for: .latest), variants: JSONObject()))
        let snapshotStart = MonotonicClock.now()
        transport.feed(snapshot)
        delivered.wait()
        let snapshotNanoseconds = MonotonicClock.now() - snapshotStart

        // Versions alternate between the two trees: each patch changes one leaf.
        let forward = JSONPatchDiff.diff(trees[0], trees[1])
        let backward = JSONPatchDiff.diff(trees[1], trees[0])
        let hashes = trees.map { ScreenHash.of($0) }
        var samples = Latencies()
        for version in 2..<(2 + patches) {
            let (ops, hash) = version % 2 == 0 ? (forward, hashes[1]) : (backward, hashes[0])
            let message = text(ServerMessage.patch(screen: "big", from: version - 1, version: version, hash: hash, ops: ops))
            let start = MonotonicClock.now()
            transport.feed(message)
            delivered.wait()
            samples.add(MonotonicClock.now() - start)
        }
        client.close()
        let applyOnly = DiffTiming.median(patches) { _ = try? forward.apply(to: trees[0]) }
        let hashOnly = DiffTiming.median(patches) { _ = ScreenHash.of(trees[1]) }
        return Timings(
            snapshotMillis: Double(snapshotNanoseconds) / 1e6, patchMedianMillis: samples.percentile(0.5) / 1000,
            patchP95Millis: samples.percentile(0.95) / 1000, applyOnlyMedianMillis: applyOnly / 1000,
            hashOnlyMedianMillis: hashOnly / 1000, snapshotBytes: snapshot.utf8.count)
    }

    /// The text of one of the hub's unmasked server frames (`ServerMessage` builds whole frames).
    static func text(_ frame: [UInt8]) -> String {
        let length7 = frame[1] & 0x7F
        let header = 2 + (length7 == 126 ? 2 : length7 == 127 ? 8 : 0)
        return String(decoding: frame[header...], as: UTF8.self)
    }
}
