import Glibc
import TestSupport
import Testing

@testable import PushHub

/// The results tally's rules (DESIGN §6 "Goals and results"), and the data dir's results log that
/// feeds it: folded in log order, a unit counts once in its latest variant, goals only after
/// exposure, and what a restart reads back equals what was appended.
@Suite struct ResultsTallyTests {
    static func served(_ unit: String, _ variant: String, salt: String = "s", at: Int = 1) -> ResultEvent {
        ResultEvent(.served(exposure(variant, salt: salt)), unit: unit, at: at)
    }

    static func confirmed(_ unit: String, _ variant: String, salt: String = "s") -> ResultEvent {
        ResultEvent(.confirmed(exposure(variant, salt: salt)), unit: unit, at: 2)
    }

    static func goal(_ unit: String, _ event: String = "buy", _ value: Double? = nil) -> ResultEvent {
        ResultEvent(.goal(event: event, value: value), unit: unit, at: 3)
    }

    static func exposure(_ variant: String, salt: String) -> ResultEvent.Exposure {
        ResultEvent.Exposure(experiment: "exp", salt: salt, variant: variant, screen: "home", version: 1)
    }

    static func fold(_ events: [ResultEvent]) -> ResultsTally {
        var tally = ResultsTally()
        for event in events { tally.fold(event) }
        return tally
    }

    @Test("served and confirmed count distinct units; a goal counts only for units served before it")
    func countsAndOrder() throws {
        let tally = Self.fold([
            Self.goal("u1", "buy", 5),  // before u1 was served: nowhere
            Self.served("u1", "A", at: 10), Self.served("u1", "A"), Self.served("u2", "A"), Self.served("u3", "B"),
            Self.confirmed("u1", "A"), Self.confirmed("u1", "A"), Self.confirmed("u3", "A"),  // not u3's variant
            Self.goal("u1", "buy", 2), Self.goal("u1", "buy", 3), Self.goal("u3", "buy"), Self.goal("nobody", "buy", 9),
        ])
        let phase = try #require(tally.phase(experiment: "exp", salt: "s"))
        #expect(phase.since == 10)
        #expect(phase.counts(of: "A").served == 2 && phase.counts(of: "A").confirmed == 1)
        #expect(phase.counts(of: "B").served == 1 && phase.counts(of: "B").confirmed == 0)
        #expect(phase.goal("buy", in: "A") == ResultsTally.GoalSums(units: 1, sum: 5, sumOfSquares: 25))
        #expect(phase.goal("buy", in: "B") == ResultsTally.GoalSums(units: 1, sum: 0, sumOfSquares: 0))
        #expect(tally.phase(experiment: "exp", salt: "other") == nil)
    }

    @Test("a unit served another variant moves whole: it counts once, in its latest variant, afresh")
    func movesWhole() throws {
        let tally = Self.fold([
            Self.served("u1", "A"), Self.confirmed("u1", "A"), Self.goal("u1", "buy", 4), Self.served("u2", "A"),
            Self.goal("u2", "buy", 1),
            Self.served("u1", "B"),  // an override
            Self.goal("u1", "buy", 7),
        ])
        let phase = try #require(tally.phase(experiment: "exp", salt: "s"))
        #expect(phase.counts(of: "A").served == 1 && phase.counts(of: "A").confirmed == 0)
        #expect(phase.goal("buy", in: "A") == ResultsTally.GoalSums(units: 1, sum: 1, sumOfSquares: 1))
        #expect(phase.counts(of: "B").served == 1 && phase.counts(of: "B").confirmed == 0)
        #expect(phase.goal("buy", in: "B").units == 1 && phase.goal("buy", in: "B").sum == 7)
        #expect(phase.goal("buy", in: "B").sumOfSquares == 49)
    }

    @Test("a new salt is a new phase; a goal counts in every phase that served the unit")
    func phases() throws {
        let tally = Self.fold([
            Self.served("u1", "A", salt: "s1"), Self.served("u1", "B", salt: "s2"), Self.goal("u1", "buy", 2),
        ])
        let first = try #require(tally.phase(experiment: "exp", salt: "s1"))
        let second = try #require(tally.phase(experiment: "exp", salt: "s2"))
        #expect(first.counts(of: "A").served == 1 && first.counts(of: "B").served == 0)
        #expect(second.counts(of: "B").served == 1)
        #expect(first.goal("buy", in: "A").sum == 2 && second.goal("buy", in: "B").sum == 2)
    }

    @Test("repeats are told apart from news, so the log need not keep them")
    func repeats() {
        let tally = Self.fold([Self.served("u1", "A"), Self.confirmed("u1", "A")])
        #expect(tally.isRepeat(Self.served("u1", "A")))
        #expect(!tally.isRepeat(Self.served("u1", "B")))
        #expect(!tally.isRepeat(Self.served("u2", "A")))
        #expect(tally.isRepeat(Self.confirmed("u1", "A")))
        #expect(!tally.isRepeat(Self.goal("u1")))
        #expect(tally.hasServed(unit: "u1") && !tally.hasServed(unit: "u2"))
    }

    @Test("the sums equal those recomputed from each unit's total, through moves and repeated goals")
    func sumsMatchARecomputation() throws {
        var generator = SeededGenerator(state: 26)
        var events: [ResultEvent] = []
        var latest: [String: String] = [:]
        var totals: [String: Double] = [:]
        for _ in 0..<5000 {
            let unit = "u\(Int.random(in: 0..<300, using: &generator))"
            if Bool.random(using: &generator) {
                let variant = ["A", "B", "C"].randomElement(using: &generator)!
                events.append(Self.served(unit, variant))
                if latest[unit] != variant { totals[unit] = nil }
                latest[unit] = variant
            } else {
                let value = Double(Int.random(in: 0...20, using: &generator)) / 4
                events.append(Self.goal(unit, "buy", value))
                if latest[unit] != nil { totals[unit, default: 0] += value }
            }
        }
        let phase = try #require(Self.fold(events).phase(experiment: "exp", salt: "s"))
        for variant in ["A", "B", "C"] {
            let units = latest.filter { $0.value == variant }.map(\.key)
            let values = units.compactMap { totals[$0] }
            #expect(phase.counts(of: variant).served == units.count)
            let sums = phase.goal("buy", in: variant)
            #expect(sums.units == values.count)
            #expect(abs(sums.sum - values.reduce(0, +)) < 1e-6)
            #expect(abs(sums.sumOfSquares - values.map { $0 * $0 }.reduce(0, +)) < 1e-6)
        }
    }

    @Test("the data dir's log: a restart folds what was appended; a line cut short by a crash is cut off")
    func localLogReadsBack() throws {
        let directory = "/tmp/pushhub-results-\(UInt32.random(in: 0...UInt32.max))"
        #expect(mkdir(directory, 0o700) == 0)
        defer { _ = system("rm -rf \(directory)") }
        let metrics = Metrics()
        let events = [Self.served("u1", "A", at: 5), Self.confirmed("u1", "A"), Self.goal("u1", "buy", 1.5)]
        do {
            let log = LocalResultsLog(dataDirectory: directory, metrics: metrics, saltOf: { _ in "s" })
            let results = ExperimentResults(log: log, metrics: metrics, now: 0)
            for event in events { results.record(event, sessionWasServed: true) }
            results.tickEnded(now: 0)
            #expect(results.tally.phase(experiment: "exp", salt: "s")?.counts(of: "A").confirmed == 1)
        }
        // A crash mid-write leaves half a line.
        let path = directory + "/" + LocalResultsLog.fileName
        let fd = open(path, O_WRONLY | O_APPEND)
        let torn = Array(#"{"ts":9,"event":"served","exp"#.utf8)
        #expect(write(fd, torn, torn.count) == torn.count)
        close(fd)
        let log = LocalResultsLog(dataDirectory: directory, metrics: metrics, saltOf: { _ in "s" })
        let again = ExperimentResults(log: log, metrics: metrics, now: 0)
        let phase = try #require(again.tally.phase(experiment: "exp", salt: "s"))
        #expect(phase.since == 5 && phase.counts(of: "A").served == 1 && phase.counts(of: "A").confirmed == 1)
        #expect(phase.goal("buy", in: "A").sum == 1.5)
        again.record(Self.served("u2", "B"), sessionWasServed: true)
        again.tickEnded(now: 0)
        let text = String(decoding: try #require(try FileBytes.read(path)), as: UTF8.self)
        #expect(text.split(separator: "\n").count == 4, "the torn line is gone, the new one whole")
        #expect(!text.contains(#""exp{"#))
    }

    @Test("lines written before results had phases count in the experiment's salt of today")
    func oldLinesWithoutSalt() throws {
        let line = try JSONReader.parse(
            #"{"ts":1,"event":"served","experiment":"exp","variant":"A","unit":"u","screen":"home","version":1}"#)
        let event = try #require(ResultEvent(json: line, saltOf: { $0 == "exp" ? "today" : "?" }))
        #expect(event.exposure?.salt == "today")
        let round = try #require(ResultEvent(json: event.json, saltOf: { _ in "?" }))
        #expect(round.kind == event.kind && round.unit == event.unit && round.at == event.at)
    }

    @Test("a unit moved and moved back within one tick ends where it was last served (no dedupe against a lagging tally)")
    func movedBackWithinATick() throws {
        let results = ExperimentResults(
            log: LocalResultsLog(dataDirectory: nil, metrics: Metrics(), saltOf: { $0 }), metrics: Metrics(), now: 0)
        results.record(Self.served("u1", "A"), sessionWasServed: true)
        results.tickEnded(now: 0)
        results.record(Self.served("u1", "B"), sessionWasServed: true)
        results.record(Self.served("u1", "A"), sessionWasServed: true)  // the tally still says A
        results.tickEnded(now: 0)
        let phase = try #require(results.tally.phase(experiment: "exp", salt: "s"))
        #expect(phase.counts(of: "A").served == 1 && phase.counts(of: "B").served == 0)
        // Goals of units never served are not kept; a served session's are.
        results.record(Self.goal("stranger", "buy", 1), sessionWasServed: false)
        results.record(Self.goal("u1", "buy", 2), sessionWasServed: false)
        results.tickEnded(now: 0)
        #expect(!results.tally.hasServed(unit: "stranger"))
        #expect(results.tally.phase(experiment: "exp", salt: "s")?.goal("buy", in: "A").sum == 2)
    }

    @Test("a phase counts at most maxGoals goal names; the events of more are dropped and counted, never a trap")
    func goalNamesAreBounded() throws {
        var events = [Self.served("u1", "A")]
        for index in 0..<(ResultsTally.maxGoals + 5) { events.append(Self.goal("u1", "order:\(index)", 1)) }
        events.append(Self.goal("u1", "order:0", 1))
        let phase = try #require(Self.fold(events).phase(experiment: "exp", salt: "s"))
        #expect(phase.goalNames.count == ResultsTally.maxGoals)
        #expect(phase.droppedGoalEvents == 5)
        #expect(phase.goal("order:0", in: "A").sum == 2)
    }

    @Test("unit ids are their exact bytes: two Unicode forms of one name are two units")
    func unitIdsAreBytes() throws {
        let composed = "caf\u{E9}", decomposed = "cafe\u{301}"
        #expect(composed == decomposed)  // Swift's String equality would merge them
        let phase = try #require(
            Self.fold([Self.served(composed, "A"), Self.served(decomposed, "B")]).phase(experiment: "exp", salt: "s"))
        #expect(phase.counts(of: "A").served == 1 && phase.counts(of: "B").served == 1)
    }

    @Test("the shared results stream: an entry appended twice (a retry after it had landed) is read once; order per hub holds")
    func sharedStreamReadsEachEntryOnce() throws {
        let server = try RedisServer()
        let endpoint = RedisEndpoint(url: try RedisURL("redis://127.0.0.1:\(server.port)"), locate: nil, tls: nil)
        let link = RedisConnection(options: endpoint.options(clientName: "results-test"), now: MonotonicClock.now())
        defer { link.close() }
        let log = SharedResultsLog(link: link, hubID: "hub-a", metrics: Metrics(), saltOf: { $0 })
        let results = ExperimentResults(log: log, metrics: Metrics(), now: MonotonicClock.now())
        let driver = PollDriver([link])
        #expect(driver.run(for: .seconds(10)) { link.isReady })
        func catchUp() {
            var caughtUp = false
            results.whenCurrent(now: MonotonicClock.now()) { failure in
                #expect(failure == nil)
                caughtUp = true
            }
            #expect(driver.run(for: .seconds(10)) {
                results.tickEnded(now: MonotonicClock.now())
                return caughtUp
            })
        }
        results.record(Self.served("u1", "A"), sessionWasServed: true)
        results.record(Self.goal("u1", "buy", 5), sessionWasServed: true)
        results.tickEnded(now: MonotonicClock.now())
        catchUp()
        #expect(results.tally.phase(experiment: "exp", salt: "s")?.goal("buy", in: "A").sum == 5)
        // The same entry again, as a retry of an append that had landed sends it (same hub, same seq).
        let lines = String(decoding: ResultEvent.lines([Self.served("u1", "A"), Self.goal("u1", "buy", 5)]), as: UTF8.self)
        _ = try server.cli(["XADD", SharedResultsLog.streamKey, "*", "hub", "hub-a", "seq", "1", "events", lines])
        // Another hub's entry, numbered on its own.
        let other = String(decoding: ResultEvent.lines([Self.goal("u1", "buy", 1)]), as: UTF8.self)
        _ = try server.cli(["XADD", SharedResultsLog.streamKey, "*", "hub", "hub-b", "seq", "1", "events", other])
        catchUp()
        let phase = try #require(results.tally.phase(experiment: "exp", salt: "s"))
        #expect(phase.counts(of: "A").served == 1)
        #expect(phase.goal("buy", in: "A").sum == 6, "5 once (its copy skipped), 1 from the other hub")
        #expect(!log.hasUndelivered && log.isLoaded)
    }

    @Test("the fast line reader agrees with JSONReader on every line it accepts, and accepts the lines the hub writes")
    func fastLineReaderAgrees() throws {
        var generator = SeededGenerator(state: 2026)
        let units = ["u17", "d-9", "caf\u{E9}", "quote\"d", "back\\slash", "tab\tx", "\u{1F600}", ""]
        let numbers = ["0", "-0", "12", "12.5", "-3.25", "1e3", "1E+2", "2.5e-3", "01", "1.", ".5", "+1", "-", "1e", "1e400", "9e15"]
        var accepted = 0
        for round in 0..<4000 {
            let unit = units.randomElement(using: &generator)!
            let event: ResultEvent =
                switch round % 3 {
                case 0: Self.served(unit, ["A", "B\u{301}"].randomElement(using: &generator)!, at: round)
                case 1: Self.confirmed(unit, "A")
                default: Self.goal(unit, "buy", Bool.random(using: &generator) ? nil : Double(round) / 8)
                }
            // The hub's own line: the fast reader takes it unless a string needs an escape or is
            // not ASCII (those go to JSONReader).
            let written = ResultEvent.lines([event]).dropLast()
            let fast = written.withUnsafeBytes { ResultLineReader.event($0, saltOf: { $0 }) }
            if !written.contains(UInt8(ascii: "\\")) && written.allSatisfy({ $0 < 0x80 }) { #expect(fast != nil, "\(String(decoding: written, as: UTF8.self))") }
            // Variations: reordered members, spaces, unknown or repeated members, odd numbers.
            var members = try #require(event.json.objectValue).map { "\"\($0.key)\":" + JSONWriter.string($0.value) }
            members.shuffle(using: &generator)
            if Bool.random(using: &generator) { members.append("\"extra\":" + numbers.randomElement(using: &generator)!) }
            if round % 7 == 0 { members.append(members[0]) }
            if round % 11 == 0 { members[0] = "\"ts\":" + numbers.randomElement(using: &generator)! }
            if round % 13 == 0 { members.append("\"nested\":{\"a\":1}") }
            let separator = [",", " , ", ",\t"].randomElement(using: &generator)!
            let line = Array(("{ " + members.joined(separator: separator) + " }").utf8)
            for candidate in [Array(written), line] {
                let quick = candidate.withUnsafeBytes { ResultLineReader.event($0, saltOf: { _ in "old" }) }
                guard let quick else { continue }
                accepted += 1
                let json = try JSONReader.parse(candidate, maxDepth: 4)
                let slow = try #require(ResultEvent(json: json, saltOf: { _ in "old" }), "\(String(decoding: candidate, as: UTF8.self))")
                #expect(quick.kind == slow.kind && quick.unit == slow.unit && quick.at == slow.at)
            }
        }
        #expect(accepted > 1500)
    }

    /// What a fresh `LocalResultsLog` reads from `bytes` as the data dir's log, and the file's size after.
    static func load(_ bytes: [UInt8], in directory: String) throws -> (events: [ResultEvent], size: Int) {
        let path = directory + "/" + LocalResultsLog.fileName
        try FileBytes.writeAtomically(bytes, to: path)
        let log = LocalResultsLog(dataDirectory: directory, metrics: Metrics(), saltOf: { $0 })
        var read: [ResultEvent] = []
        log.deliver = { read += $0 }
        log.load(now: 0)
        return (read, try FileBytes.read(path)?.count ?? -1)
    }

    static func same(_ a: ResultEvent, _ b: ResultEvent) -> Bool { a.kind == b.kind && a.unit == b.unit && a.at == b.at }

    @Test("a damaged results log: cut at any offset, the lines before the cut are read and the cut one cut off; a byte flipped anywhere (three ways) touches only its own line")
    func damagedLogHasOneOutcome() throws {
        let directory = "/tmp/pushhub-results-damage-\(UInt32.random(in: 0...UInt32.max))"
        #expect(mkdir(directory, 0o700) == 0)
        defer { _ = system("rm -rf \(directory)") }
        let events = [
            Self.served("u1", "A", at: 4), Self.confirmed("u1", "A"), Self.goal("u1", "buy", 2.5),
            Self.served("caf\u{E9}", "B", at: 5), Self.goal("caf\u{E9}", "buy", nil),
            // A release's reports (DESIGN §15) share the log.
            ResultEvent(.release(.init(screen: "home", release: "r-2", outcome: .served)), unit: "u1", at: 6),
            ResultEvent(
                .release(.init(screen: "home", release: "r-2", outcome: .errored(component: "C", message: "boom"))),
                unit: "u1", at: 7),
        ]
        let bytes = ResultEvent.lines(events)
        let ends = bytes.indices.filter { bytes[$0] == 0x0A }  // line i ends at ends[i]
        for cut in 0...bytes.count {
            let complete = ends.filter { $0 < cut }.count
            let (read, size) = try Self.load(Array(bytes[..<cut]), in: directory)
            #expect(read.count == complete && zip(read, events).allSatisfy(Self.same), "cut at \(cut)")
            #expect(size == (complete == 0 ? 0 : ends[complete - 1] + 1), "cut at \(cut): the torn line is cut off")
        }
        for offset in bytes.indices {
            let line = ends.firstIndex { $0 >= offset }!
            // A flipped newline joins its line to the next: both are damaged.
            let damaged: Set<Int> = bytes[offset] == 0x0A ? [line, line + 1] : [line]
            let untouched = events.indices.filter { !damaged.contains($0) }.map { events[$0] }
            for mask: UInt8 in [0x01, 0x80, 0xFF] {
                var flipped = bytes
                flipped[offset] ^= mask
                let (read, _) = try Self.load(flipped, in: directory)
                // The other lines are read, in order; the damaged one is skipped or read as what it now says.
                var rest = read[...]
                for event in untouched {
                    guard let found = rest.firstIndex(where: { Self.same($0, event) }) else {
                        Issue.record("offset \(offset) ^ \(mask): lost an undamaged line")
                        break
                    }
                    rest = rest[(found + 1)...]
                }
                #expect(read.count <= untouched.count + 1, "offset \(offset) ^ \(mask)")
            }
        }
    }
}
