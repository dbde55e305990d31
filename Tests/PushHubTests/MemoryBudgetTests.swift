import CLinux
import Testing

@testable import PushHub

/// Issue 8's memory goal: at most 0.5 KiB per connection that said hello and subscribed to one
/// screen (bench/README.md "RSS per connection"). Such a connection is two heap objects — its
/// `Connection` and its `ReadySession` — plus its slots in the loop's tables, so a field that
/// tips either object into the next malloc chunk (16 bytes more) shows here before in the bench.
@Suite struct MemoryBudgetTests {
    @Test func aSignedInSessionFitsA208ByteChunk() {
        let attributes = ClientAttributes(
            session: Session.newSessionID(), user: nil, device: "d", platform: "ios",
            appVersion: SemanticVersion("1.0.0"), claimCohorts: [], claims: [:], connectedAt: 0)
        let ready = ReadySession(attributes: attributes)
        // glibc's chunks go in steps of 16 bytes; 200 usable bytes is the 208-byte chunk.
        #expect(malloc_usable_size(Unmanaged.passUnretained(ready).toOpaque()) <= 200)
    }

    @Test func theSessionInAConnectionIsOneWord() {
        // `awaitingHello` is boxed (`indirect`): the signed-in state is one reference (an
        // Optional may add a tag byte).
        #expect(MemoryLayout<Session.State>.size == 8)
        #expect(MemoryLayout<Session?>.size <= 9)
    }
}
