import Foundation
import Glibc
import TestSupport
import Testing

@testable import PushHub

@Suite struct MemoryReclaimerTests {
    /// Runs alone in a child process (an exit test): resident memory is the whole process's, and
    /// in the test process the suites beside this one allocate meanwhile, and their in-process
    /// hubs' own reclaimers trim the same arenas first (under load it saw RSS fall 5 MB, not 32).
    @Test(
        "memory freed in bulk on another thread goes back to the system at the next check, not before",
        .disabled(
            if: Sanitizers.replacesAllocator, "a sanitizer's allocator replaces glibc's, which this test measures"))
    func trimsAfterBulkFree() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            // A loop thread's load: 64 MiB in 1 KiB blocks from its own arena, every 64th still in
            // use afterwards (so the arena's top never frees, as in a hub whose other clients stay).
            let kept = UnsafeSendableBox<[UnsafeMutableRawPointer]>([])
            let done = DispatchSemaphore(value: 0)
            let thread = Thread {
                var blocks: [UnsafeMutableRawPointer] = []
                for _ in 0..<65_536 {
                    let block = malloc(1024)!
                    memset(block, 1, 1024)
                    blocks.append(block)
                }
                for (index, block) in blocks.enumerated() where index % 64 != 0 { free(block) }
                kept.value = blocks.enumerated().filter { $0.offset % 64 == 0 }.map(\.element)
                done.signal()
            }
            thread.start()
            done.wait()
            defer { kept.value.forEach { free($0) } }

            var reclaimer = MemoryReclaimer(now: 0)
            let early = reclaimer.check(now: 1)
            let before = ProcessStatus.residentBytes() ?? 0
            let held = reclaimer.check(now: MemoryReclaimer.interval) ?? 0
            let after = ProcessStatus.residentBytes() ?? 0
            // The figures go back on standard error; the test process checks them.
            FileHandle.standardError.write(Data("\nfigures \(early ?? -1) \(held) \(before) \(after)\n".utf8))
        }
        let printed = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        let line = printed.split(separator: "\n").last { $0.hasPrefix("figures ") } ?? ""
        let figures = line.split(separator: " ").dropFirst().compactMap { Int($0) }
        guard figures.count == 4 else {
            Issue.record("the child process printed no figures: \(printed)")
            return
        }
        let (early, held, before, after) = (figures[0], figures[1], figures[2], figures[3])
        #expect(early == -1, "not due before its interval, yet it trimmed")
        #expect(held >= 32 << 20, "the allocator held \(held) free bytes")
        #expect(before - after >= 32 << 20, "RSS went from \(before) to \(after) bytes")
    }
}

/// Lets a test thread hand its result back (the test waits for the thread before reading).
final class UnsafeSendableBox<Value>: @unchecked Sendable {
    var value: Value
    init(_ value: Value) { self.value = value }
}
