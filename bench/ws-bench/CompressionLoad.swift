import Foundation
import Glibc
import PushHub
import PushHubClient
import WSProtocol

/// What permessage-deflate costs and saves: `count` subscribers of a 10,000-node screen receive
/// its snapshot, then `publishes` one-leaf patches. Per delivery: bytes on the wire (the frame
/// each subscriber read) and hub CPU (user + system over the phase, divided by deliveries); and
/// the hub's RSS per subscribed connection. Run once with the clients offering compression and
/// once without, against the same hub build.
enum CompressionLoad {
    struct Phase {
        var frameBytes = 0
        var cpuMicrosPerDelivery = 0.0
    }

    struct Result {
        var snapshot = Phase()
        var patch = Phase()
        var rssKiBPerConnection = 0.0
        /// Frames the hub compressed over the run (`pushhub_compressions_total`).
        var compressions = 0
    }

    /// A screen of 100 sections × 99 rows (~10,000 objects) in which every 101st row up to
    /// `changes` × 101 reads "changed": each publish that raises `changes` by one changes one leaf.
    static func screen(changes: Int) -> [UInt8] {
        func isChanged(_ row: Int) -> Bool { row % 101 == 0 && row / 101 < changes }
        return JSONWriter.write(
            .object([
                "type": .string("screen"),
                "children": .array(
                    (0..<100).map { s in
                        .object([
                            "id": .string("section-\(s)"), "type": .string("section"), "title": .string("Section \(s)"),
                            "children": .array(
                                (0..<99).map { i in
                                    .object([
                                        "id": .string("item-\(s)-\(i)"), "type": .string("row"),
                                        "label": .string(isChanged(s * 99 + i) ? "changed \(s * 99 + i)" : "Item \(i)"),
                                        "value": .number(Double(s * 99 + i)),
                                    ])
                                }),
                        ])
                    }),
            ]))
    }

    static func run(hub: HubProcess, count: Int, publishes: Int, compression: Bool) throws -> Result {
        let admin = try AdminClientLite(hub: hub)
        try admin.put("/v1/screens/bench/big", screen(changes: 0))
        usleep(200_000)
        var result = Result()
        let rssBefore = hub.residentBytes
        let collector = FrameCollector()
        var links: [Link] = []
        for i in 0..<count {
            let link = try RawConnection.openLink(
                to: hub.client, from: RawConnection.source(i), path: "/v1/connect", tls: false, compression: compression)
            try link.writeAll(RawConnection.clientText(#"{"type":"hello","protocol":1,"device":"bench-\#(i)"}"#))
            collector.add(link)
            links.append(link)
        }
        let welcomes = collector.collect(count, deadline: MonotonicClock.now() + 60_000_000_000)
        guard welcomes.arrivals.count == count else { throw BenchError("only \(welcomes.arrivals.count) of \(count) said hello") }

        var cpuBefore = hub.cpuSeconds
        let subscribe = RawConnection.clientText(#"{"type":"subscribe","screen":"bench/big"}"#)
        for link in links { try link.writeAll(subscribe) }
        let snapshots = collector.collect(count, deadline: MonotonicClock.now() + 300_000_000_000)
        guard snapshots.arrivals.count == count else { throw BenchError("only \(snapshots.arrivals.count) of \(count) got the snapshot") }
        result.snapshot = Phase(
            frameBytes: snapshots.lastFrame, cpuMicrosPerDelivery: (hub.cpuSeconds - cpuBefore) * 1e6 / Double(count))
        usleep(300_000)
        result.rssKiBPerConnection = Double(hub.residentBytes - rssBefore) / 1024 / Double(count)

        cpuBefore = hub.cpuSeconds
        for publish in 1...publishes {
            let start = MonotonicClock.now()
            try admin.put("/v1/screens/bench/big", screen(changes: publish))
            let patches = collector.collect(count, deadline: start + 60_000_000_000)
            guard patches.arrivals.count == count else { throw BenchError("only \(patches.arrivals.count) of \(count) got a patch") }
            result.patch.frameBytes = patches.lastFrame
        }
        result.patch.cpuMicrosPerDelivery = (hub.cpuSeconds - cpuBefore) * 1e6 / Double(count * publishes)
        result.compressions = try admin.metric("pushhub_compressions_total")
        return result
    }
}
