import HTTP1

/// Keeps the hub's JWKS (`--jwt-jwks URL`, DESIGN §18) on the control plane's thread: fetches it
/// when `JWKSSchedule` says, swaps each good answer's keys into the `JWTKeyStore`, keeps the last
/// good answer in `<data>/jwks.json` (read back at start, so a restart while the provider is down
/// still verifies), and tells every client loop when a fetch ended (`LoopCommand.keysRefreshed`).
/// A loop source without a descriptor: the control plane's loop runs its timer.
///
/// Invariants: a bad answer (garbage, no usable key, an error status, no answer) never changes
/// the keys in use; at most one request is outstanding; every fetch's end reaches every loop.
final class JWKSFetcher: LoopSource {
    let url: HTTPURL
    private let store: JWTKeyStore
    /// Where the last good answer is kept (nil: memory only).
    private let cacheFile: String?
    private var metrics: JWTMetrics { store.metrics }
    /// How requests go out: the control plane's HTTP client (nil: none yet; fetches fail).
    var client: (any HTTPFetching)?
    private var schedule = JWKSSchedule()
    /// The client loops' mailboxes; set once before any loop runs.
    private var loops: [Mailbox] = []
    /// The validator of the answer in use, sent as `If-None-Match`.
    private var entityTag: String?
    /// The body of the answer in use (written to `cacheFile` only when it changes).
    private var body: [UInt8]?
    /// The monotonic clock an answer is timed by (a test's own clock in tests).
    var clock: () -> UInt64 = MonotonicClock.now
    /// A fetch that takes longer has failed (the hello timeout is shorter: a parked hello does not
    /// wait for it).
    static let timeout: UInt64 = 10_000_000_000

    /// Reads the kept answer of `url` from `cacheFile`, if there is one, into `store`.
    init(url: HTTPURL, store: JWTKeyStore, cacheFile: String?) {
        self.url = url
        self.store = store
        self.cacheFile = cacheFile
        metrics.setPublishedKeys(0)
        restore()
    }

    func attach(loops mailboxes: [Mailbox]) { loops = mailboxes }

    // MARK: - LoopSource

    var watch: LoopWatch? { nil }
    var nextDeadline: UInt64? { schedule.nextDeadline }
    func ready(readable: Bool, writable: Bool, hangup: Bool, now: UInt64) {}
    func tick(now: UInt64) { perform(schedule.timerFired(now: now), now: now) }

    /// A loop parked a hello whose token names a kid no key has.
    func unknownKidReported(_ kid: String, now: UInt64) {
        Log.debug("a token names an unknown kid", [("kid", kid), ("jwks", url.description)])
        perform(schedule.unknownKidReported(now: now), now: now)
    }

    // MARK: - Fetching

    private func perform(_ action: JWKSSchedule.Action, now: UInt64) {
        switch action {
        case .none: break
        case .releaseParked: for mailbox in loops { mailbox.post(.keysRefreshed) }
        case .fetch: fetch(now: now)
        }
    }

    private func fetch(now: UInt64) {
        guard let client else { return ended(.failed("no HTTP client"), now: now) }
        var headers: [(name: String, value: String)] = [("Accept", "application/json")]
        if let entityTag, body != nil { headers.append(("If-None-Match", entityTag)) }
        let request = HTTP1Request(
            method: "GET", target: url.target, headers: headers, maxResponseBodyBytes: JWKSDocument.maximumBytes)
        client.send(request, to: url.origin, timeout: Self.timeout, now: now) { [weak self] outcome in
            guard let self else { return }
            self.ended(outcome, now: self.clock())
        }
    }

    private func ended(_ outcome: HTTP1Outcome, now: UInt64) {
        let judged = judge(outcome)
        let scheduled: JWKSSchedule.Outcome
        switch judged {
        case .keys(let document, let answer):
            adopt(document, answer: answer)
            metrics.count(.ok)
            scheduled = .keys(maxAgeSeconds: JWKSSchedule.maxAge(cacheControl: answer.header("Cache-Control")))
        case .notModified(let answer):
            metrics.count(.notModified)
            scheduled = .keys(maxAgeSeconds: JWKSSchedule.maxAge(cacheControl: answer.header("Cache-Control")))
        case .failed(let reason):
            metrics.count(.failed)
            Log.error(
                "the JWKS could not be fetched; the keys in use stay",
                [
                    ("jwks", url.description), ("error", reason), ("keys", store.keys.published.count),
                    ("attempt", schedule.failures + 1),
                ])
            scheduled = .failed
        }
        perform(schedule.fetchEnded(scheduled, now: now), now: now)
    }

    /// What an answer means for the keys.
    private enum Judgement {
        case keys(JWKSDocument, HTTP1Response)
        case notModified(HTTP1Response)
        case failed(String)
    }

    private func judge(_ outcome: HTTP1Outcome) -> Judgement {
        switch outcome {
        case .failed(let reason):
            return .failed(reason)
        case .response(let answer) where answer.status == 304 && body != nil:
            return .notModified(answer)
        case .response(let answer) where answer.status == 200:
            do {
                return .keys(try JWKSDocument(parsing: answer.body, origin: url.description), answer)
            } catch {
                return .failed("the answer is not a usable JWKS: \(error)")
            }
        case .response(let answer):
            return .failed("it answered \(answer.status)")
        }
    }

    /// Makes `document`'s keys the ones in use, and keeps the answer.
    private func adopt(_ document: JWKSDocument, answer: HTTP1Response) {
        store.publish(document.keys)
        metrics.setPublishedKeys(document.keys.count)
        entityTag = answer.header("ETag")
        for note in document.notes {
            Log.warning("a JWKS key was left out", [("jwks", url.description), ("key", note)])
        }
        guard answer.body != body else { return }
        body = answer.body
        Log.info(
            "JWKS keys in use",
            [("jwks", url.description), ("kids", document.keys.map { $0.kid ?? "(none)" }.joined(separator: ","))])
        keep(answer.body)
    }

    // MARK: - The kept answer

    /// Writes `<data>/jwks.json`: the URL (an answer kept for another URL is not read back), the
    /// answer, and the SHA-256 of the answer's RFC 8785 form — so that a damaged byte that leaves
    /// the JSON whole (a key's coordinate, a kid) is caught rather than restored as another key.
    private func keep(_ answer: [UInt8]) {
        guard let cacheFile else { return }
        var kept: JSONObject = [
            "url": .string(url.description), "saved_at": .number(Double(WallClock.nowMilliseconds())),
        ]
        // The answer parsed as a JWKS a moment ago: it is JSON.
        let jwks = (try? JSONReader.parse(answer)) ?? .null
        kept["jwks"] = jwks
        kept["jwks_sha256"] = .string(ScreenHash.of(jwks))
        do {
            try FileBytes.writeAtomically(JSONWriter.write(.object(kept)), to: cacheFile)
        } catch {
            Log.error("the JWKS could not be kept on disk", [("file", cacheFile), ("error", "\(error)")])
        }
    }

    /// Reads the kept answer, when it is for this URL and still a usable JWKS.
    private func restore() {
        guard let cacheFile else { return }
        let bytes: [UInt8]
        do {
            guard let read = try FileBytes.read(cacheFile) else { return }
            bytes = read
        } catch {
            return Log.warning("the kept JWKS cannot be read", [("file", cacheFile), ("error", "\(error)")])
        }
        // What the file holds is checked below; a file that is not JSON says so the same way.
        guard let kept = try? JSONReader.parse(bytes), let jwks = kept["jwks"] else {
            return Log.warning("the kept JWKS is not JSON; ignored", [("file", cacheFile)])
        }
        guard kept["url"]?.stringValue == url.description else {
            return Log.info("the kept JWKS is another URL's; ignored", [("file", cacheFile)])
        }
        guard kept["jwks_sha256"]?.stringValue == ScreenHash.of(jwks) else {
            return Log.warning("the kept JWKS is damaged (its checksum differs); ignored", [("file", cacheFile)])
        }
        let answer = JSONWriter.write(jwks)
        do {
            let document = try JWKSDocument(parsing: answer, origin: url.description)
            store.publish(document.keys)
            metrics.setPublishedKeys(document.keys.count)
            body = answer
            Log.info("JWKS keys restored from disk", [("file", cacheFile), ("keys", document.keys.count)])
        } catch {
            Log.warning("the kept JWKS is not usable; ignored", [("file", cacheFile), ("error", "\(error)")])
        }
    }
}

@available(*, unavailable)
extension JWKSFetcher: Sendable {}
