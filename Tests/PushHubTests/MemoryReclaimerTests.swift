import Foundation
import Glibc
import TestSupport
import Testing

@testable import PushHub

@Suite struct MemoryReclaimerTests {
    /// Resident bytes of this process.
    static func residentBytes() -> Int {
        let fields = (try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8))?.split(separator: " ") ?? []
        return (fields.count > 1 ? Int(fields[1]) ?? 0 : 0) * Int(sysconf(Int32(_SC_PAGESIZE)))
    }

    @Test(
        "memory freed in bulk on another thread goes back to the system at the next check, not before",
        .disabled(if: Sanitizers.replacesAllocator, "a sanitizer's allocator replaces glibc's, which this test measures"))
    func trimsAfterBulkFree() {
        // A loop thread's load: 64 MiB in 1 KiB blocks from its own arena, every 64th still in use
        // afterwards (so the arena's top never frees, as in a hub whose other clients stay).
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
        #expect(reclaimer.check(now: 1) == nil, "not due before its interval")
        let before = Self.residentBytes()
        let held = reclaimer.check(now: MemoryReclaimer.interval) ?? 0
        let after = Self.residentBytes()
        #expect(held >= 32 << 20, "the allocator held \(held) free bytes")
        #expect(before - after >= 32 << 20, "RSS went from \(before) to \(after) bytes")
        // No check that the next one finds nothing to trim: the allocator is the whole process's,
        // and the suites that run beside this one free memory meanwhile (it failed so under load).
    }
}

/// Lets a test thread hand its result back (the test waits for the thread before reading).
final class UnsafeSendableBox<Value>: @unchecked Sendable {
    var value: Value
    init(_ value: Value) { self.value = value }
}
