import Testing

@testable import PushHub

/// The replicated journal's entries as XRANGE returns them, and what hubs send each other
/// (DESIGN §11), without Redis: the parts a hub must never get wrong silently.
@Suite struct ClusterJournalTests {
    private static func entry(_ lsn: Int, hub: String = "a", records: String, gathers: String? = nil) -> RESPValue {
        var fields: [RESPValue] = [
            .bulkString(Array("hub".utf8)), .bulkString(Array(hub.utf8)),
            .bulkString(Array("records".utf8)), .bulkString(Array(records.utf8)),
        ]
        if let gathers { fields += [.bulkString(Array("gathers".utf8)), .bulkString(Array(gathers.utf8))] }
        return .array([.bulkString(Array("0-\(lsn)".utf8)), .array(fields)])
    }

    static let sync = #"{"kind":"sync_numbered","last_seq":4}"#

    @Test("entries that follow on are handed over in order with their records and gathers")
    func entries() throws {
        let reply = RESPValue.array([
            Self.entry(5, records: "[\(Self.sync)]"),
            Self.entry(6, hub: "b", records: "[\(Self.sync),\(Self.sync)]", gathers: "[[1,17]]"),
        ])
        guard case .entries(let entries, let more) = ClusterJournal.entries(in: reply, from: 5) else {
            Issue.record("expected entries")
            return
        }
        #expect(!more && entries.map(\.lsn) == [5, 6] && entries.map(\.hub) == ["a", "b"])
        #expect(entries[1].records.count == 2 && entries[1].gathers == [1: 17])
    }

    @Test("an entry that does not follow on is a gap, never skipped")
    func gap() {
        let reply = RESPValue.array([Self.entry(9, records: "[]")])
        guard case .gap(let expected, let found) = ClusterJournal.entries(in: reply, from: 5) else {
            Issue.record("expected a gap")
            return
        }
        #expect(expected == 5 && found == 9)
    }

    @Test("an entry this hub cannot apply is reported with its number and why")
    func undecodable() {
        let reply = RESPValue.array([Self.entry(5, records: #"[{"kind":"from_the_future"}]"#)])
        guard case .undecodable(let lsn, let reason) = ClusterJournal.entries(in: reply, from: 5) else {
            Issue.record("expected undecodable")
            return
        }
        #expect(lsn == 5 && reason.contains("from_the_future"))
        #expect(ClusterJournal.lsn(of: "1700000000000-0") == nil)
    }

    @Test("queries and answers survive the trip between hubs")
    func wire() throws {
        let receipts = try #require(
            ClusterWire.parseRequest(ClusterWire.request(from: "hub-a", id: 1, query: .receipts(seqs: [3, 5]))))
        #expect(receipts.query.json == HubQuestion.receipts(seqs: [3, 5]).json)
        let queries: [LoopQuery] = [
            .reach(try Target(json: .object(["user": .string("u1")]))), .renderTargets(screen: "home"), .subscribers,
            .clients(user: nil), .clients(user: "u2"), .clientBuilds,
        ]
        for query in queries {
            let message = ClusterWire.request(from: "hub-a", id: 42, query: .loops(query))
            let parsed = try #require(ClusterWire.parseRequest(message))
            #expect(parsed.from == "hub-a" && parsed.id == 42 && parsed.query.json == query.json)
            guard case .loops = parsed.query else {
                Issue.record("a loop query came back as another kind")
                return
            }
        }
        let client = ClientAttributes(
            session: "s1", user: "u1", device: "d1", platform: "ios", appVersion: SemanticVersion("5.2.0"),
            claimCohorts: ["beta"], claims: ["secret": .string("stays")], connectedAt: 1234,
            components: DeclaredComponents(["Carousel": 2]))
        let answers: [LoopAnswer] = [
            .published(
                sent: 3,
                renditions: [RenditionKey(patches: ["exp/a"], capabilities: 1, components: [.renders, .cannotRender])]),
            .count(7),
            .reach(connections: 2, users: ["u1", "u2"]),
            .renderTargets([
                RenderTarget(
                    capabilities: Capabilities(appVersion: SemanticVersion("6.0.0"), limits: ["Carousel": 1, "Text": 1000]),
                    variantPatches: [VariantPatch(experiment: "exp", changedAt: 2, variant: "b", patch: .object(["title": .string("B")]))]): 4
            ]),
            .clientBuilds([
                ClientBuild(platform: "ios", appVersion: SemanticVersion("5.1.0"), declared: nil): 3,
                ClientBuild(platform: nil, appVersion: nil, declared: DeclaredComponents(["Carousel": 1])): 2,
            ]),
            .subscribers(["home": 5]),
            .receipts([3: ReceiptCounts(targetedOnline: 4, delivered: 3, acked: 1)]),
            .clients([client]),
        ]
        let parsed = try #require(ClusterWire.parseAnswers(ClusterWire.answers(from: "hub-b", id: 9, answers)))
        #expect(parsed.hub == "hub-b" && parsed.id == 9)
        #expect(parsed.answers.map(\.json) == answers.map(\.json))
        if case .renderTargets(let targets) = parsed.answers[3] {
            // The patch itself travels: the asking hub renders the candidate with it; so do the
            // client's capabilities.
            #expect(targets.keys.first?.variantPatches.first?.patch == .object(["title": .string("B")]))
            #expect(targets.keys.first?.capabilities.limits == ["Carousel": 1, "Text": 1000])
        }
        if case .clientBuilds(let builds) = parsed.answers[4] {
            #expect(builds.values.reduce(0, +) == 5 && builds.keys.contains { $0.declared?.versions == ["Carousel": 1] })
        } else {
            Issue.record("client builds came back as another kind")
        }
        guard case .clients(let clients) = parsed.answers.last else { return }
        #expect(clients.first?.claims.isEmpty == true)  // the token's claims stay on their hub
        #expect(ClusterWire.parseRequest(Array("not json".utf8)) == nil)
    }
}
