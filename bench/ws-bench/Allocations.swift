import Foundation
import Glibc
import PushHub

/// Heap allocations per echoed message: the hub runs under bench/malloc-count.c (LD_PRELOAD);
/// two runs echo `messages` and `2 × messages` over the same connections, and the difference
/// of their totals divided by `messages` is what each extra message cost.
enum Allocations {
    static func perMessage(loops: Int, connections: Int, messages: Int) throws -> (
        perMessage: Double, one: Int, two: Int
    ) {
        let library = try build()
        let one = try count(library: library, loops: loops, connections: connections, messages: messages)
        let two = try count(library: library, loops: loops, connections: connections, messages: 2 * messages)
        return (Double(two - one) / Double(messages), one, two)
    }

    static func build() throws -> String {
        // Run from the repository root (as `make bench` does).
        let source = FileManager.default.currentDirectoryPath + "/bench/malloc-count.c"
        let library = NSTemporaryDirectory() + "pushhub-malloc-count.so"
        let compiler = Process()
        compiler.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        compiler.arguments = ["cc", "-shared", "-fPIC", "-O2", "-o", library, source]
        try compiler.run()
        compiler.waitUntilExit()
        guard compiler.terminationStatus == 0 else { throw BenchError("cannot build \(source) with cc") }
        return library
    }

    static func count(library: String, loops: Int, connections: Int, messages: Int) throws -> Int {
        let hub = try HubProcess(loops: loops, environment: ["LD_PRELOAD": library])
        _ = try EchoLoad.run(
            server: hub.client, connections: connections, messageBytes: 32, warmup: .zero,
            duration: .seconds(60), maxMessages: messages)
        hub.stop()
        let log = (try? String(contentsOfFile: hub.logPath, encoding: .utf8)) ?? ""
        guard let line = log.split(separator: "\n").last(where: { $0.hasPrefix("malloc-count: ") }),
            let total = Int(line.dropFirst("malloc-count: ".count))
        else {
            throw BenchError("the hub printed no malloc count")
        }
        return total
    }
}
