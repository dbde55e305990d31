import CLinux
import Testing

@testable import PushHub

/// Issue 8's memory goal: at most 0.5 KiB per connection that said hello and subscribed to one
/// screen (bench/README.md "RSS per connection"). Such a connection is two heap objects — its
/// `WebSocketConnection` and its `ReadySession` — plus its slots in the loop's and the shard's
/// tables, so a field that tips either object into the next malloc chunk (16 bytes more) shows
/// here before in the bench.
@Suite struct MemoryBudgetTests {
    @Test func aSignedInSessionFitsA208ByteChunk() {
        let attributes = ClientAttributes(
            session: Session.newSessionID(), user: nil, device: "d", platform: "ios",
            appVersion: SemanticVersion("1.0.0"), claimCohorts: [], claims: [:], connectedAt: 0)
        let ready = ReadySession(attributes: attributes, capabilities: .latest)
        // glibc's chunks go in steps of 16 bytes; 200 usable bytes is the 208-byte chunk.
        #expect(malloc_usable_size(Unmanaged.passUnretained(ready).toOpaque()) <= 200)
    }

    @Test func aClientConnectionFitsA176ByteChunk() {
        // glibc hands out (size + 8) rounded up to 16: an object of at most 168 bytes takes a
        // 176-byte chunk. (It was 192 while the connection held its session.)
        #expect(Self.instanceSize(of: WebSocketConnection.self) <= 168)
    }

    @Test func aSessionIsOneWordInItsShardAndItsConnectionCarriesOnlyASlot() {
        // `awaitingHello` is boxed (`indirect`): the signed-in state is one reference.
        #expect(MemoryLayout<Session.State>.size == 8)
        #expect(MemoryLayout<Session>.stride == 8)
        #expect(MemoryLayout<SessionSlot?>.size <= 5)
    }

    /// The size of an instance of `type`, from its class metadata (the Swift ABI's layout where
    /// there is no Objective-C runtime: kind, superclass, flags, instance address point, then the
    /// instance size as a UInt32 at byte 24).
    static func instanceSize(of type: AnyClass) -> Int {
        Int(unsafeBitCast(type, to: UnsafeRawPointer.self).load(fromByteOffset: 24, as: UInt32.self))
    }
}
