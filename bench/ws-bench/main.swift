import Foundation
import Glibc
import PushHub

// ws-bench: starts pushhub processes on loopback and prints the foundation's figures:
// echo messages/s and latency with 100 connections of 32-byte messages, handshakes/s, and
// RSS per idle connection with 10,000 idle connections. Results go into bench/README.md.
//
//   ws-bench [--loops N] [--seconds S] [--connections C] [--idle N] [--subscribers N] [--tls on] [--only echo|handshake|alloc|diff|client|fanout|sync|assign|variants|idle|compression]

var options: [String: String] = [:]
var argumentIterator = CommandLine.arguments.dropFirst().makeIterator()
while let flag = argumentIterator.next() {
    guard flag.hasPrefix("--"), let value = argumentIterator.next() else {
        FileHandle.standardError.write(
            Data(
                "usage: ws-bench [--loops N] [--seconds S] [--connections C] [--idle N] [--subscribers N] [--tls on] [--only echo|handshake|alloc|diff|client|fanout|sync|assign|variants|idle|compression]\n"
                    .utf8))
        exit(2)
    }
    options[String(flag.dropFirst(2))] = value
}
let loops = Int(options["loops"] ?? "") ?? SystemInfo.onlineCores
let seconds = Int(options["seconds"] ?? "") ?? 5
let connections = Int(options["connections"] ?? "") ?? 100
let idleCount = Int(options["idle"] ?? "") ?? 10_000
let subscriberCount = Int(options["subscribers"] ?? "") ?? 10_000
let only = options["only"]
/// `--tls on`: the fan-out runs over TLS (the hub gets a certificate made for the run).
let overTLS = options["tls"] == "on"

// The load generator needs a descriptor per connection.
SystemInfo.raiseDescriptorLimit()

print("ws-bench: hub with \(loops) loop(s), \(SystemInfo.onlineCores) cores, load generator on 1 thread")
do {
    if only == nil || only == "echo" {
        let hub = try HubProcess(loops: loops)
        let result = try EchoLoad.run(
            server: hub.client, connections: connections, messageBytes: 32, warmup: .seconds(1),
            duration: .seconds(seconds))
        hub.stop()
        print(
            String(
                format:
                    "echo: %d connections x 32-byte messages: %.0f messages/s, p50 %.0f µs, p99 %.0f µs (%d messages in %.1f s)",
                connections, Double(result.messages) / result.seconds, result.latencies.percentile(0.5),
                result.latencies.percentile(0.99), result.messages, result.seconds))
    }
    if only == nil || only == "handshake" {
        let hub = try HubProcess(loops: loops)
        let result = try HandshakeLoad.run(server: hub.client, concurrency: 50, duration: .seconds(seconds))
        hub.stop()
        print(
            String(
                format: "handshakes: %.0f per second (50 in flight, %d in %.1f s)",
                Double(result.count) / result.seconds, result.count, result.seconds))
    }
    if only == nil || only == "alloc" {
        let result = try Allocations.perMessage(loops: 1, connections: connections, messages: 200_000)
        print(
            String(
                format:
                    "allocations: %.3f heap allocations per echoed 32-byte message (hub totals: %d for 200k messages, %d for 400k)",
                max(0, result.perMessage), result.one, result.two))
    }
    if only == nil || only == "diff" {
        for (stage, micros) in DiffTiming.stages(iterations: 30) {
            print(String(format: "  %@: %.0f µs", stage, micros))
        }
        let result = DiffTiming.run(iterations: 50)
        print(
            String(
                format:
                    "diff: %d-node screen, one changed leaf: render+diff+encode median %.0f µs, p99 %.0f µs; patch %d bytes = %.3f%% of the %d-byte snapshot",
                result.nodes, result.medianMicros, result.p99Micros, result.patchBytes,
                100 * Double(result.patchBytes) / Double(result.snapshotBytes), result.snapshotBytes))
    }
    if only == nil || only == "client" {
        let result = ClientTiming.run(patches: 100)
        print(
            String(
                format:
                    "swift client, 10,001-node screen: one-leaf patch received -> tree callback median %.2f ms, p95 %.2f ms (apply alone %.0f µs, canonical form + SHA-256 %.2f ms); %d-byte snapshot %.1f ms",
                result.patchMedianMillis, result.patchP95Millis, result.applyOnlyMedianMillis * 1000, result.hashOnlyMedianMillis,
                result.snapshotBytes, result.snapshotMillis))
    }
    if only == nil || only == "fanout" {
        let hub = try HubProcess(loops: loops, extraArguments: ["--dev"] + (overTLS ? try BenchTLS.hubFlags() : []))
        let result = try ScreenLoad.run(
            hub: hub, count: subscriberCount, publishes: Int(options["publishes"] ?? "") ?? 5, tls: overTLS)
        hub.stop()
        print(
            String(
                format:
                    "fanout%@: publish -> %d subscribers (%d-byte patch frames): %.0f deliveries/s, p50 %.1f ms, p99 %.1f ms; hub CPU %.2f µs per delivery",
                overTLS ? " over TLS" : "", result.subscribers, result.frameBytes, result.deliveriesPerSecond,
                result.p50Millis, result.p99Millis, result.cpuMicrosPerDelivery))
        print(
            String(
                format:
                    "  median PUT -> first delivery %.1f ms (HTTP, journal fsync, wake-up); first -> last delivery %.1f ms",
                result.firstDeliveryMillis, result.spreadMillis))
        print(
            String(
                format:
                    "subscribed: %d connections with one subscription each: RSS %.1f MiB -> %.1f MiB, %.2f KiB per connection",
                result.subscribers, Double(result.rssBefore) / 1_048_576, Double(result.rssAfter) / 1_048_576,
                Double(result.rssAfter - result.rssBefore) / 1024 / Double(result.subscribers)))
    }
    if only == nil || only == "sync" {
        let hub = try HubProcess(loops: loops)
        let result = try SyncLoad.run(hub: hub, count: subscriberCount)
        hub.stop()
        print(
            String(
                format:
                    "sync to one user among %d signed-in connections: p50 %.2f ms, p99 %.2f ms (200 syncs, POST -> arrival)",
                subscriberCount, result.oneUserP50, result.oneUserP99))
        print(
            String(
                format: "sync to all %d: %.0f deliveries/s, p50 %.1f ms, p99 %.1f ms", subscriberCount,
                result.allPerSecond,
                result.allP50, result.allP99))
        print(
            String(
                format: "cohort import: 1,000,000 ids in 10 batches: %.2f s, hub RSS +%.1f MiB", result.importSeconds,
                Double(result.importRSSBytes) / 1_048_576))
        print(
            String(
                format: "replay: 1,000 missed syncs on reconnect (hello -> last one received): %.1f ms",
                result.replayMillis))
    }
    if only == nil || only == "assign" {
        for traffic in [1.0, 0.5] {
            let result = AssignmentRate.run(count: 2_000_000, traffic: traffic)
            print(
                String(
                    format:
                        "assignments: %.2f M/s on one core (2,000,000 distinct units, running 50/50 experiment at traffic %.1f, not sticky)",
                    result.perSecond / 1e6, traffic))
        }
    }
    if only == nil || only == "variants" {
        let hub = try HubProcess(loops: loops, extraArguments: ["--dev"])
        let result = try ScreenLoad.run(
            hub: hub, count: subscriberCount, publishes: Int(options["publishes"] ?? "") ?? 5, variants: 4)
        hub.stop()
        print(
            String(
                format:
                    "variants: publish of a screen in a 4-variant experiment -> %d subscribers: renders %d, encodes %d per publish; %.0f deliveries/s, p50 %.1f ms, p99 %.1f ms",
                result.subscribers, result.rendersPerPublish, result.encodesPerPublish, result.deliveriesPerSecond,
                result.p50Millis, result.p99Millis))
    }
    if only == nil || only == "compression" {
        // The snapshots are ~0.5 MB each: a thousand subscribers by default, --subscribers to change.
        let count = Int(options["subscribers"] ?? "") ?? 1_000
        // Off; on as shipped (messages under 256 bytes, such as a one-leaf patch, go as they are);
        // on for every message.
        for (offered, minimum) in [(false, 256), (true, 256), (true, 0)] {
            let hub = try HubProcess(loops: loops, extraArguments: ["--dev", "--compression-min-bytes", "\(minimum)"])
            let result = try CompressionLoad.run(hub: hub, count: count, publishes: 5, compression: offered)
            hub.stop()
            print(
                String(
                    format:
                        "compression %@ (min %d bytes): 10,000-node snapshot to %d subscribers: %d bytes, hub CPU %.1f µs per delivery; one-leaf patch %d bytes, %.2f µs per delivery; RSS %.2f KiB per subscribed connection; %d frames compressed",
                    offered ? "on " : "off", minimum, count, result.snapshot.frameBytes, result.snapshot.cpuMicrosPerDelivery,
                    result.patch.frameBytes, result.patch.cpuMicrosPerDelivery, result.rssKiBPerConnection,
                    result.compressions))
        }
    }
    if only == nil || only == "idle" {
        let hub = try HubProcess(loops: loops)
        let result = try IdleMemory.run(hub: hub, count: idleCount)
        hub.stop()
        print(
            String(
                format: "idle: %d connections: RSS %.1f MiB -> %.1f MiB, %.2f KiB per connection",
                result.opened, Double(result.before) / 1_048_576, Double(result.after) / 1_048_576,
                Double(result.after - result.before) / 1024 / Double(result.opened)))
    }
} catch {
    FileHandle.standardError.write(Data("ws-bench: \(error)\n".utf8))
    exit(1)
}
