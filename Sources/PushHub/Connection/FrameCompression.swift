import WSProtocol

/// One client loop's permessage-deflate work (RFC 7692), shared by all its connections.
///
/// The hub agrees `server_no_context_takeover` and `client_no_context_takeover` with every client
/// (`DeflateParameters.accept`), so no compression state belongs to a connection: one inflater
/// reads every client's compressed messages (each is inflated whole, then the inflater resets),
/// one deflater per window size writes for all of them, and a frame shared by many connections
/// (a rendition's patch or snapshot, a sync) is compressed once: `compressed(_:windowBits:)`
/// remembers the compressed twins of the frames it was asked for last, by the identity of the
/// frame's buffer.
///
/// Invariants: a remembered entry holds its frame, so the buffer's address cannot be reused by
/// another frame while the entry exists (an address hit is the same bytes); at most
/// `maxEntries` entries and `maxRememberedBytes` bytes of frames are remembered; confined to
/// its loop's thread.
final class FrameCompression {
    /// Reads compressed client messages; resets after each one.
    let inflater = Inflater()
    private var deflaters: [Int: Deflater] = [:]
    private var remembered: [Key: Entry] = [:]
    private var rememberedBytes = 0
    private var uses: UInt64 = 0
    private let metrics: Metrics

    init(metrics: Metrics) {
        self.metrics = metrics
    }

    static let maxEntries = 64
    static let maxRememberedBytes = 16 << 20

    private struct Key: Hashable {
        var address: UInt
        var count: Int
        var windowBits: Int
    }

    private struct Entry {
        /// Held so that its address stays this frame's.
        let frame: [UInt8]
        /// Nil: not worth compressing (sent as it is).
        let compressed: [UInt8]?
        var lastUse: UInt64
    }

    /// The compressed twin of `frame` (a complete unmasked frame) for a connection that agreed
    /// `windowBits`, or nil when it goes as it is: a control frame, under `minimumBytes`, or no
    /// smaller compressed.
    func compressed(_ frame: [UInt8], windowBits: Int, minimumBytes: Int) -> [UInt8]? {
        guard frame.count >= minimumBytes + 2 else { return nil }
        let address = frame.withUnsafeBufferPointer { UInt(bitPattern: $0.baseAddress) }
        let key = Key(address: address, count: frame.count, windowBits: windowBits)
        uses += 1
        if let index = remembered.index(forKey: key) {
            remembered.values[index].lastUse = uses
            return remembered.values[index].compressed
        }
        let made = deflate(frame, windowBits: windowBits, minimumBytes: minimumBytes)
        remember(key, Entry(frame: frame, compressed: made, lastUse: uses))
        return made
    }

    /// Compresses a frame made for one connection (an echo): nothing is remembered.
    func compressedOnce(_ frame: [UInt8], windowBits: Int, minimumBytes: Int) -> [UInt8]? {
        guard frame.count >= minimumBytes + 2 else { return nil }
        return deflate(frame, windowBits: windowBits, minimumBytes: minimumBytes)
    }

    private func deflate(_ frame: [UInt8], windowBits: Int, minimumBytes: Int) -> [UInt8]? {
        metrics.compressions.add(1, ordering: .relaxed)
        let deflater = deflaters[windowBits] ?? Deflater(windowBits: windowBits)
        deflaters[windowBits] = deflater
        return DeflatedFrame.make(from: frame, with: deflater, minimumBytes: minimumBytes)
    }

    private func remember(_ key: Key, _ entry: Entry) {
        remembered[key] = entry
        rememberedBytes += entry.frame.count
        func overBudget() -> Bool {
            remembered.count > Self.maxEntries || (rememberedBytes > Self.maxRememberedBytes && remembered.count > 1)
        }
        while overBudget() {
            guard let oldest = remembered.min(by: { $0.value.lastUse < $1.value.lastUse }) else { return }
            rememberedBytes -= oldest.value.frame.count
            remembered[oldest.key] = nil
        }
    }
}
