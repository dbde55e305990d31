import CLinux
import Foundation
import Glibc
import PushHub
import PushHubClient
import WSProtocol

/// Publish → every subscriber: `count` clients on /v1/connect subscribe to one screen; each
/// publish changes one leaf; the generator stamps each delivery against the moment the PUT was
/// sent. Also the hub's RSS per subscribed connection.
enum ScreenLoad {
    struct Result {
        var subscribers: Int
        var rssBefore: Int
        var rssAfter: Int
        var deliveriesPerSecond: Double
        var p50Millis: Double
        var p99Millis: Double
        var frameBytes: Int
        /// Median time from sending the PUT to the first delivery (HTTP + fsync + wake-up).
        var firstDeliveryMillis: Double
        /// Median time from the first to the last delivery of a publish (the fan-out itself).
        var spreadMillis: Double
        /// Renditions rendered and messages encoded by the hub for the last publish (from /metrics).
        var rendersPerPublish = 0
        var encodesPerPublish = 0
        /// Hub CPU (user + system) per delivery over the publishes, in microseconds.
        var cpuMicrosPerDelivery = 0.0
    }

    /// - Parameter variants: when > 0, a running experiment with that many variants, each with a
    ///   merge patch for the screen, splits the subscribers into that many renditions.
    /// - Parameter tls: the clients speak TLS (the hub was started with a certificate).
    static func run(hub: HubProcess, count: Int, publishes: Int, variants: Int = 0, tls: Bool = false) throws -> Result {
        let admin = try AdminClientLite(hub: hub)
        var version = 0
        func tree(_ n: Int) -> [UInt8] {
            let rows = (0..<8).map { #"{"id":"r\#($0)","type":"row","text":"row number \#($0)"}"# }.joined(
                separator: ",")
            return Array(#"{"type":"screen","title":"t\#(n)","children":[\#(rows)]}"#.utf8)
        }
        version += 1
        try admin.put("/v1/screens/bench/live", tree(version))
        if variants > 0 {
            let list = (0..<variants).map { #"{"key":"v\#($0)"}"# }.joined(separator: ",")
            let patches = (0..<variants).map { #""v\#($0)":{"variant":"v\#($0)"}"# }.joined(separator: ",")
            try admin.put(
                "/v1/experiments/bench-variants",
                Array(#"{"status":"running","variants":[\#(list)],"screens":{"bench/live":{\#(patches)}}}"#.utf8))
        }
        var renders = 0, encodes = 0
        usleep(200_000)
        let rssBefore = hub.residentBytes
        let collector = FrameCollector()
        /// hello (a distinct anonymous device per connection, so experiments split them) + subscribe.
        func greeting(_ i: Int) -> [UInt8] {
            RawConnection.clientText(#"{"type":"hello","protocol":1,"device":"bench-\#(i)"}"#)
                + RawConnection.clientText(#"{"type":"subscribe","screen":"bench/live"}"#)
        }
        for i in 0..<count {
            let link = try RawConnection.openLink(to: hub.client, from: RawConnection.source(i), path: "/v1/connect", tls: tls)
            try link.writeAll(greeting(i))
            collector.add(link)
        }
        // welcome + snapshot for everyone
        let setup = collector.collect(2 * count, deadline: MonotonicClock.now() + 60_000_000_000)
        guard setup.arrivals.count == 2 * count else {
            throw BenchError("only \(setup.arrivals.count / 2) of \(count) subscribed")
        }
        usleep(300_000)
        let rssAfter = hub.residentBytes
        var latencies = Latencies()
        var deliveryNanos: UInt64 = 0
        var frameBytes = 0
        var firsts = Latencies(), spreads = Latencies()
        let cpuBefore = hub.cpuSeconds
        for _ in 0..<publishes {
            version += 1
            let rendersBefore = try admin.metric("pushhub_renders_total"),
                encodesBefore = try admin.metric("pushhub_encodes_total")
            let start = MonotonicClock.now()
            try admin.put("/v1/screens/bench/live", tree(version))
            let (arrivals, last) = collector.collect(count, deadline: start + 30_000_000_000)
            guard arrivals.count == count else {
                throw BenchError("only \(arrivals.count) of \(count) got publish \(version)")
            }
            for arrival in arrivals { latencies.add(arrival - start) }
            deliveryNanos += arrivals.max()! - start
            firsts.add(arrivals.min()! - start)
            renders = try admin.metric("pushhub_renders_total") - rendersBefore
            encodes = try admin.metric("pushhub_encodes_total") - encodesBefore
            spreads.add(arrivals.max()! - arrivals.min()!)
            frameBytes = last
        }
        let cpuMicros = (hub.cpuSeconds - cpuBefore) * 1e6 / Double(count * publishes)
        return Result(
            subscribers: count, rssBefore: rssBefore, rssAfter: rssAfter,
            deliveriesPerSecond: Double(count * publishes) / (Double(deliveryNanos) / 1e9),
            p50Millis: latencies.percentile(0.5) / 1000, p99Millis: latencies.percentile(0.99) / 1000,
            frameBytes: frameBytes,
            firstDeliveryMillis: firsts.percentile(0.5) / 1000, spreadMillis: spreads.percentile(0.5) / 1000,
            rendersPerPublish: renders, encodesPerPublish: encodes, cpuMicrosPerDelivery: cpuMicros)
    }
}

/// A minimal blocking admin client for the benchmark (requests with the bearer token).
struct AdminClientLite {
    let address: SocketAddress
    let token: String

    /// The admin API of `hub`, with the token it wrote into its data directory.
    init(hub: HubProcess) throws {
        address = hub.admin
        token = try String(contentsOfFile: hub.data + "/admin.token", encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    func put(_ path: String, _ body: [UInt8]) throws { _ = try send("PUT", path, body) }

    /// A counter or gauge of `/metrics` (0 when absent).
    func metric(_ name: String) throws -> Int {
        let text = String(decoding: try send("GET", "/metrics", []), as: UTF8.self)
        let line = text.split(separator: "\n").first { $0.hasPrefix(name + " ") } ?? ""
        return Int(line.split(separator: " ").last ?? "0") ?? 0
    }

    /// Sends a request; returns the response body (throws unless 200).
    func send(_ method: String, _ path: String, _ body: [UInt8]) throws -> [UInt8] {
        let answer = try BlockingHTTP.request(
            address, method: method, path: path, body: body, bearer: token, timeout: .seconds(120))
        guard answer.status == 200 else {
            throw BenchError(
                "\(method) \(path) failed (\(answer.status)): \(String(decoding: answer.body.prefix(200), as: UTF8.self))"
            )
        }
        return answer.body
    }
}
