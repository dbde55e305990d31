import Testing
import WSProtocol

@testable import PushHub

/// The v1 session (DESIGN §3–§6, §9 backpressure) as a state machine: every input in every state
/// (awaitingHello, ready, closed), asserting the actions — `.send` frames decoded to their JSON —
/// and the state the session is left in.
@Suite struct SessionTests {
    // MARK: - Before hello

    @Test("a new session awaits hello until its deadline, with no ready part and nothing to catch up")
    func newSession() {
        let session = Session(helloDeadline: Driver.deadline, upgradeToken: "t")
        #expect(StateKind(session) == .awaitingHello(deadline: Driver.deadline, upgradeToken: "t"))
        #expect(session.helloDeadline == Driver.deadline)
        #expect(session.ready == nil && !session.isClosed && !session.needsCatchUp)
    }

    @Test(
        "every message but hello before hello is a hello_first error naming its type; the state is unchanged",
        arguments: [
            ClientMessage.subscribe(screen: "home", have: nil), .subscribe(screen: "home", have: .init(version: 1)),
            .unsubscribe(screen: "home"), .ack(sync: "s-1"), .rendered(screen: "home", version: 1),
        ])
    func helloFirst(_ message: ClientMessage) {
        var driver = Driver()
        _ = driver.publish("home", Tree.screen())
        driver.append(driver.sync(1, .all))
        var session = Session(helloDeadline: Driver.deadline, upgradeToken: nil)
        let steps = driver.receive(&session, message)
        #expect(steps.map(\.name) == ["error:hello_first"])
        #expect(steps.first?.json?["ref"] == .string(message.typeName))
        #expect(StateKind(session) == .awaitingHello(deadline: Driver.deadline, upgradeToken: nil))
    }

    @Test("push_token registers the signed-in device as targeting sees it; null removes it; no device, no registration")
    func pushToken() throws {
        var driver = Driver()
        var session = try driver.signIn(user: "u1", appVersion: "5.2.0")
        let steps = driver.receive(&session, .pushToken(provider: .apns, token: "ab12", topic: "com.x"))
        guard case .pushDeviceRegistered(let device)? = steps.first, steps.count == 1 else {
            Issue.record("expected one registration, got \(steps.map(\.name))")
            return
        }
        #expect(device.user == "u1" && device.device == "d-1" && device.token == "ab12" && device.topic == "com.x")
        #expect(device.platform == "ios" && device.appVersion == SemanticVersion("5.2.0"))
        let removed = driver.receive(&session, .pushTokenRemoved)
        guard case .pushDeviceRemoved(let key)? = removed.first else {
            Issue.record("expected a removal, got \(removed.map(\.name))")
            return
        }
        #expect(key == DeviceKey(user: "u1", device: "d-1"))

        var anonymousOfNoDevice = Session(helloDeadline: Driver.deadline, upgradeToken: nil)
        _ = driver.receive(&anonymousOfNoDevice, Driver.hello(token: Driver.token(user: "u2"), device: nil))
        let refused = driver.receive(&anonymousOfNoDevice, .pushToken(provider: .fcm, token: "f", topic: nil))
        #expect(refused.map(\.name) == ["error:bad_message"])
        #expect(driver.receive(&anonymousOfNoDevice, .pushTokenRemoved).map(\.name) == ["error:bad_message"])
    }

    @Test("an invalid message is answered with its error before and after hello; the state is unchanged")
    func invalidMessage() throws {
        var driver = Driver()
        let error = WireError(code: "bad_json", message: "unexpected end of input at byte 3", ref: nil)
        let waiting = Session(helloDeadline: Driver.deadline, upgradeToken: nil)
        let steps = driver.receivedInvalid(waiting, error)
        #expect(
            steps == [
                .send(
                    .object([
                        "type": .string("error"), "code": .string("bad_json"),
                        "message": .string("unexpected end of input at byte 3"), "ref": .null,
                    ]))
            ])
        #expect(StateKind(waiting) == .awaitingHello(deadline: Driver.deadline, upgradeToken: nil))

        let ready = try driver.signIn()
        let again = driver.receivedInvalid(ready, WireError(code: "unknown_type", message: "no", ref: "bye"))
        #expect(again.map(\.name) == ["error:unknown_type"])
        #expect(again.first?.json?["ref"] == .string("bye"))
        #expect(StateKind(ready) == .ready)
    }

    @Test("hub events before hello produce nothing and leave the session waiting")
    func hubEventsBeforeHello() {
        var driver = Driver()
        _ = driver.publish("home", Tree.screen())
        let session = Session(helloDeadline: Driver.deadline, upgradeToken: nil)
        let v2 = driver.publish("home", Tree.screen(score: "1-0"))
        #expect(driver.versionPublished(session, v2).isEmpty)
        #expect(driver.versionPublished(session, v2, congested: true).isEmpty)
        #expect(driver.screenMayHaveChanged(session, screen: "home").isEmpty)
        #expect(driver.screenMayHaveChanged(session, screen: "home", congested: true).isEmpty)
        #expect(driver.screenDeleted(session, "home").isEmpty)
        #expect(driver.syncArrived(session, driver.sync(1, .all)).isEmpty)
        #expect(driver.syncArrived(session, driver.sync(2, .all, collapse: "k"), congested: true).isEmpty)
        #expect(driver.drained(session).isEmpty)
        #expect(StateKind(session) == .awaitingHello(deadline: Driver.deadline, upgradeToken: nil))
    }

    @Test("the timer before the hello deadline does nothing; at the deadline it closes with 1008 \"hello timeout\"")
    func helloTimeoutAtDeadline() {
        var driver = Driver()
        var session = Session(helloDeadline: Driver.deadline, upgradeToken: nil)
        #expect(driver.timerFired(&session, now: 0).isEmpty)
        #expect(driver.timerFired(&session, now: Driver.deadline - 1).isEmpty)
        #expect(StateKind(session) == .awaitingHello(deadline: Driver.deadline, upgradeToken: nil))
        #expect(
            driver.timerFired(&session, now: Driver.deadline) == [.close(.policyViolation, reason: "hello timeout")])
        #expect(StateKind(session) == .closed)
        #expect(session.helloDeadline == nil)
    }

    @Test("the timer after the hello deadline closes with 1008 \"hello timeout\", once")
    func helloTimeoutAfterDeadline() {
        var driver = Driver()
        var session = Session(helloDeadline: Driver.deadline, upgradeToken: nil)
        #expect(
            driver.timerFired(&session, now: Driver.deadline + 1_000_000_000)
                == [.close(.policyViolation, reason: "hello timeout")])
        #expect(StateKind(session) == .closed)
        #expect(driver.timerFired(&session, now: Driver.deadline + 2_000_000_000).isEmpty)
    }

    // MARK: - Hello

    @Test("an anonymous hello is welcomed when allowed: signedIn, then welcome with the view's last sync seq")
    func anonymousWelcome() throws {
        var driver = Driver()
        driver.append(driver.sync(1, .all))
        driver.append(driver.sync(2, .cohort("beta")))
        driver.append(driver.sync(3, .user("u99")))
        var session = Session(helloDeadline: Driver.deadline, upgradeToken: nil)
        let steps = driver.receive(&session, Driver.hello(device: "d-42"))
        #expect(steps.map(\.name) == ["signedIn", "welcome"])
        #expect(steps.first == .signedIn(user: nil, device: "d-42"))
        let ready = try #require(session.ready)
        let welcome = try #require(steps.last?.json)
        #expect(
            welcome
                == .object([
                    "type": .string("welcome"), "session": .string(ready.attributes.session), "user": .null,
                    "heartbeat_s": .number(25), "sync_seq": .number(3), "epoch": .string(Driver.epoch),
                ]))
        #expect(StateKind(session) == .ready)
        #expect(ready.unit == "d-42" && ready.subscriptions.isEmpty)
    }

    @Test("session ids are \"s-\" and 13 base-62 characters, and differ between sessions")
    func sessionIDs() {
        let ids = (0..<50).map { _ in Session.newSessionID() }
        #expect(Set(ids).count == ids.count)
        for id in ids {
            #expect(id.hasPrefix("s-") && id.utf8.count == 15)
            #expect(
                id.utf8.dropFirst(2).allSatisfy {
                    ($0 >= 0x30 && $0 <= 0x39) || ($0 | 0x20 >= 0x61 && $0 | 0x20 <= 0x7A)
                })
        }
    }

    @Test("the signed-in attributes carry device, platform, app version and the connection time")
    func attributes() throws {
        var driver = Driver()
        var session = Session(helloDeadline: Driver.deadline, upgradeToken: nil)
        _ = driver.receive(&session, Driver.hello(device: "d-7", platform: "android", appVersion: "6.1.0"))
        let attributes = try #require(session.ready?.attributes)
        #expect(attributes.user == nil && attributes.device == "d-7" && attributes.platform == "android")
        #expect(attributes.appVersion == SemanticVersion("6.1.0"))
        #expect(attributes.connectedAt == driver.now && attributes.claimCohorts.isEmpty)
        #expect(session.ready?.target == RenderTarget(appVersion: SemanticVersion("6.1.0")))
    }

    @Test("an anonymous hello is refused with unauthorized and 1008 when anonymous clients are not allowed")
    func anonymousRefused() {
        var driver = Driver(allowAnonymous: false)
        var session = Session(helloDeadline: Driver.deadline, upgradeToken: nil)
        let steps = driver.receive(&session, Driver.hello(device: "d-42"))
        #expect(steps.map(\.name) == ["error:unauthorized", "close"])
        #expect(steps.first?.json?["ref"] == .string("hello"))
        #expect(steps.last == .close(.policyViolation, reason: "unauthorized"))
        #expect(StateKind(session) == .closed)
    }

    @Test("an anonymous hello without a device is a bad_message; the session still awaits hello and can retry")
    func anonymousWithoutDevice() throws {
        var driver = Driver()
        var session = Session(helloDeadline: Driver.deadline, upgradeToken: nil)
        for device in [nil, ""] as [String?] {
            let steps = driver.receive(&session, Driver.hello(device: device))
            #expect(steps.map(\.name) == ["error:bad_message"])
            #expect(steps.first?.json?["ref"] == .string("hello"))
            #expect(StateKind(session) == .awaitingHello(deadline: Driver.deadline, upgradeToken: nil))
        }
        #expect(driver.receive(&session, Driver.hello(device: "d-1")).map(\.name) == ["signedIn", "welcome"])
        #expect(StateKind(session) == .ready)
    }

    @Test("a valid HS256 token signs in its sub with the token's cohorts, even when anonymous clients are refused")
    func validToken() throws {
        var driver = Driver(allowAnonymous: false)
        var session = Session(helloDeadline: Driver.deadline, upgradeToken: nil)
        let token = Driver.token(user: "u17", cohorts: ["beta"])
        let steps = driver.receive(&session, Driver.hello(token: token, device: nil))
        #expect(steps.map(\.name) == ["signedIn", "welcome"])
        #expect(steps.first == .signedIn(user: "u17", device: ""))
        #expect(steps.last?.json?["user"] == .string("u17"))
        let attributes = try #require(session.ready?.attributes)
        #expect(attributes.user == "u17" && attributes.claimCohorts == ["beta"])
        #expect(attributes.claims["sub"] == .string("u17"))
        #expect(session.ready?.unit == "u17")
    }

    @Test(
        "a bad token is refused with unauthorized naming its fault, then 1008; the session is closed",
        arguments: [
            (Driver.token(user: "u17", secret: Array("another secret".utf8)), JWTError.badSignature),
            (Driver.token(user: "u17", expires: Driver.nowSeconds - 3600), .expired),
            (Driver.token(user: nil), .noSubject),
            (
                Base64URL.encode(Array(#"{"alg":"none"}"#.utf8)) + "." + Base64URL.encode(Array(#"{"sub":"u17"}"#.utf8))
                    + ".", .unsupportedAlgorithm("none")
            ),
            ("not-a-token", .malformed("expected three dot-separated parts")),
        ])
    func badToken(_ token: String, _ fault: JWTError) {
        var driver = Driver()
        var session = Session(helloDeadline: Driver.deadline, upgradeToken: nil)
        let steps = driver.receive(&session, Driver.hello(token: token, device: "d-1"))
        #expect(steps.map(\.name) == ["error:unauthorized", "close"])
        #expect(steps.first?.json?["message"] == .string(fault.description))
        #expect(steps.first?.json?["ref"] == .string("hello"))
        #expect(steps.last == .close(.policyViolation, reason: "unauthorized"))
        #expect(StateKind(session) == .closed)
    }

    @Test("the upgrade request's token signs the client in when hello has none")
    func upgradeToken() throws {
        var driver = Driver(allowAnonymous: false)
        var session = Session(helloDeadline: Driver.deadline, upgradeToken: Driver.token(user: "u5"))
        let steps = driver.receive(&session, Driver.hello(device: nil))
        #expect(steps.first == .signedIn(user: "u5", device: ""))
        #expect(session.ready?.attributes.user == "u5")
    }

    @Test("a bad upgrade token refuses a hello that has none")
    func badUpgradeToken() {
        var driver = Driver()
        var session = Session(helloDeadline: Driver.deadline, upgradeToken: "x.y.z")
        let steps = driver.receive(&session, Driver.hello(device: "d-1"))
        #expect(steps.map(\.name) == ["error:unauthorized", "close"])
        #expect(StateKind(session) == .closed)
    }

    @Test("a token in hello takes precedence over the upgrade request's")
    func helloTokenWins() {
        var driver = Driver()
        var session = Session(helloDeadline: Driver.deadline, upgradeToken: "x.y.z")
        let steps = driver.receive(&session, Driver.hello(token: Driver.token(user: "u8"), device: nil))
        #expect(steps.first == .signedIn(user: "u8", device: ""))
    }

    @Test(
        "an app.version that is not a semantic version is a bad_message; the session still awaits hello",
        arguments: ["5.x", "", "five", "1.2.3.4"])
    func badAppVersion(_ version: String) {
        var driver = Driver()
        var session = Session(helloDeadline: Driver.deadline, upgradeToken: nil)
        let steps = driver.receive(&session, Driver.hello(token: Driver.token(user: "u17"), appVersion: version))
        #expect(steps.map(\.name) == ["error:bad_message"])
        #expect(steps.first?.json?["ref"] == .string("hello"))
        #expect(StateKind(session) == .awaitingHello(deadline: Driver.deadline, upgradeToken: nil))
    }

    @Test("a hello without app.version is welcomed and rendered as an up-to-date client")
    func noAppVersion() {
        var driver = Driver()
        var session = Session(helloDeadline: Driver.deadline, upgradeToken: nil)
        #expect(
            driver.receive(&session, Driver.hello(device: "d-1", platform: nil, appVersion: nil)).map(\.name) == [
                "signedIn", "welcome",
            ])
        #expect(session.ready?.target == .latest)
    }

    @Test("a protocol other than 1 is refused with unsupported_protocol and 1008", arguments: [0, 2, 100])
    func unsupportedProtocol(_ version: Int) {
        var driver = Driver()
        var session = Session(helloDeadline: Driver.deadline, upgradeToken: nil)
        let steps = driver.receive(&session, Driver.hello(device: "d-1", protocolVersion: version))
        #expect(steps.map(\.name) == ["error:unsupported_protocol", "close"])
        #expect(steps.last == .close(.policyViolation, reason: "unsupported protocol"))
        #expect(StateKind(session) == .closed)
    }

    @Test(
        "with last_sync: the live syncs after it that target the client, newest per collapse key (mandatory OR-ed), expired ones skipped, in seq order"
    )
    func continuityAfterLastSync() throws {
        var driver = Driver()
        driver.appendContinuityLog()
        var session = Session(helloDeadline: Driver.deadline, upgradeToken: nil)
        let steps = driver.receive(
            &session, Driver.hello(token: Driver.token(user: "u17", cohorts: ["beta"]), platform: "ios", lastSync: 1))
        #expect(
            steps.map(\.name) == [
                "signedIn", "welcome", "sync", "delivered", "sync", "delivered", "sync", "delivered", "sync",
                "delivered",
            ])
        #expect(steps[1].json?["sync_seq"] == .number(11))
        #expect(steps.compactMap(\.syncSeq) == [2, 5, 7, 9])
        #expect(steps.compactMap(\.deliveredSeq) == [2, 5, 7, 9])
        #expect(
            steps.filter { $0.name == "sync" }.map { $0.json?["mandatory"] == .bool(true) } == [
                false, true, false, false,
            ])
        // The frame of a sync that stands only for itself is the sync's own (encoded once).
        #expect(driver.frames[1] == driver.view.syncs.find("s-2")?.frame)
    }

    @Test("with last_sync: a spread sync at or below it is replayed (the client may have seen a later one before its turn)")
    func continuitySpreadBelowLastSync() throws {
        // Found by the soak (bench/soak/repro_spread_gap.py): s-1 is spread over 30 s, s-2 is not;
        // the client got s-2, dropped before its turn for s-1, and came back with last_sync 2.
        var driver = Driver()
        driver.append(driver.sync(1, .all, spreadMilliseconds: 30_000))
        driver.append(driver.sync(2, .all))
        driver.append(driver.sync(3, .user("u99"), spreadMilliseconds: 30_000))  // not for this client
        var session = Session(helloDeadline: Driver.deadline, upgradeToken: nil)
        let steps = driver.receive(&session, Driver.hello(token: Driver.token(user: "u17"), lastSync: 2))
        #expect(steps.compactMap(\.syncSeq) == [1])
    }

    @Test("with last_sync at the log's last seq (and this epoch, or none) nothing is replayed")
    func continuityUpToDate() {
        var driver = Driver()
        driver.appendContinuityLog()
        for epoch in [nil, Driver.epoch] {
            var session = Session(helloDeadline: Driver.deadline, upgradeToken: nil)
            let steps = driver.receive(
                &session, Driver.hello(token: Driver.token(user: "u17"), lastSync: 11, epoch: epoch))
            #expect(steps.map(\.name) == ["signedIn", "welcome"])
        }
    }

    @Test(
        "a last_sync from another epoch, or above the log's last seq, replays every kept sync that targets the client",
        arguments: [(11, "e-other"), (12, nil), (500, Driver.epoch), (0, "e-other")] as [(Int, String?)])
    func continuityFromAnotherState(lastSync: Int, epoch: String?) throws {
        var driver = Driver()
        driver.appendContinuityLog()
        var session = Session(helloDeadline: Driver.deadline, upgradeToken: nil)
        let steps = driver.receive(
            &session,
            Driver.hello(
                token: Driver.token(user: "u17", cohorts: ["beta"]), platform: "ios", lastSync: lastSync, epoch: epoch))
        // As with last_sync 0: 1, 2, 5 (for 4 and 5), 7, 9.
        #expect(steps.compactMap(\.syncSeq) == [1, 2, 5, 7, 9])
    }

    @Test("welcome names the epoch of the hub state; heartbeats are sent only to clients that ask")
    func welcomeEpochAndHeartbeats() throws {
        var driver = Driver()
        var plain = Session(helloDeadline: Driver.deadline, upgradeToken: nil)
        let steps = driver.receive(&plain, Driver.hello())
        #expect(steps.map(\.name) == ["signedIn", "welcome"])
        #expect(steps[1].json?["epoch"] == .string(Driver.epoch))
        var asking = Session(helloDeadline: Driver.deadline, upgradeToken: nil)
        #expect(driver.receive(&asking, Driver.hello(heartbeats: true)).map(\.name) == ["signedIn", "sendHeartbeats", "welcome"])
    }

    @Test("a subscribe before the screen's first version waits (pending), counts against the limit, and gets the snapshot at its publish")
    func subscribeBeforePublish() throws {
        var driver = Driver()
        driver.settings.maxSubscriptions = 2
        var session = try driver.signIn()
        let waiting = driver.receive(&session, .subscribe(screen: "away", have: nil))
        #expect(waiting == [.awaitsScreen("away"), .send(.object(["type": .string("pending"), "screen": .string("away")]))])
        #expect(session.ready?.subscriptions.isEmpty == true)
        // Asked again: told again, indexed once.
        #expect(driver.receive(&session, .subscribe(screen: "away", have: nil)).map(\.name) == ["pending"])
        _ = driver.receive(&session, .subscribe(screen: "later", have: nil))
        #expect(
            driver.receive(&session, .subscribe(screen: "third", have: nil)).map(\.name) == [
                "error:too_many_subscriptions", "subscriptionRefused",
            ])
        let published = driver.awaitedScreenPublished(session, "away", Tree.screen())
        #expect(published.map(\.name) == ["stoppedAwaiting", "snapshot", "subscribed"])
        #expect(published[1].json?["version"] == .number(1))
        #expect(session.ready?.subscriptions.map(\.version.name) == ["away"])
        // Unsubscribing a waiting screen stops the wait; a screen published later brings nothing then.
        #expect(driver.receive(&session, .unsubscribe(screen: "later")) == [.stoppedAwaiting("later")])
        #expect(driver.awaitedScreenPublished(session, "later", Tree.screen()).isEmpty)
    }

    @Test("without last_sync a user gets only the live syncs that name it (user or users), unexpired")
    func continuityWithoutLastSync() {
        var driver = Driver()
        driver.appendContinuityLog()
        var session = Session(helloDeadline: Driver.deadline, upgradeToken: nil)
        let steps = driver.receive(
            &session, Driver.hello(token: Driver.token(user: "u17", cohorts: ["beta"]), platform: "ios"))
        #expect(
            steps.map(\.name) == ["signedIn", "welcome", "sync", "delivered", "sync", "delivered", "sync", "delivered"])
        #expect(steps.compactMap(\.syncSeq) == [1, 2, 9])
    }

    @Test("without last_sync an anonymous client gets no replay")
    func continuityAnonymous() {
        var driver = Driver()
        driver.appendContinuityLog()
        var session = Session(helloDeadline: Driver.deadline, upgradeToken: nil)
        #expect(driver.receive(&session, Driver.hello(device: "d-1")).map(\.name) == ["signedIn", "welcome"])
    }

    @Test("with last_sync an anonymous client gets the syncs for everyone and for cohorts it is in")
    func continuityAnonymousLastSync() {
        var driver = Driver()
        driver.appendContinuityLog()
        var session = Session(helloDeadline: Driver.deadline, upgradeToken: nil)
        let steps = driver.receive(&session, Driver.hello(device: "d-1", platform: "ios", lastSync: 0))
        #expect(steps.compactMap(\.syncSeq) == [5])
    }

    @Test("a second hello is an already_hello error; the session stays signed in as it was")
    func secondHello() throws {
        var driver = Driver()
        var session = try driver.signIn(user: "u17")
        let before = try #require(session.ready)
        let steps = driver.receive(&session, Driver.hello(token: Driver.token(user: "u99"), device: "d-2"))
        #expect(steps.map(\.name) == ["error:already_hello"])
        #expect(steps.first?.json?["ref"] == .string("hello"))
        #expect(session.ready === before && before.attributes.user == "u17")
    }

    // MARK: - Subscribe, unsubscribe, ack, rendered

    @Test("subscribing to an invalid name is an error and subscribes nothing")
    func subscribeErrors() throws {
        var driver = Driver()
        _ = driver.publish("home", Tree.screen())
        var session = try driver.signIn()
        let invalid = driver.receive(&session, .subscribe(screen: "Home Screen!", have: nil))
        #expect(invalid.map(\.name) == ["error:invalid_screen_name"])
        #expect(invalid.first?.json?["ref"] == .string("subscribe"))
        #expect(
            driver.receive(&session, .subscribe(screen: "", have: nil)).map(\.name) == ["error:invalid_screen_name"])
        #expect(
            driver.receive(&session, .subscribe(screen: "home/history", have: nil)).map(\.name) == [
                "error:invalid_screen_name"
            ])
        #expect(session.ready?.subscriptions.isEmpty == true)
    }

    @Test("past the per-connection limit a new subscribe is refused; resubscribing to a held screen is not")
    func subscriptionLimit() throws {
        var driver = Driver()
        driver.settings.maxSubscriptions = 2
        for name in ["a", "b", "c"] { _ = driver.publish(name, Tree.screen()) }
        var session = try driver.signIn()
        #expect(driver.receive(&session, .subscribe(screen: "a", have: nil)).map(\.name) == ["snapshot", "subscribed"])
        #expect(driver.receive(&session, .subscribe(screen: "b", have: nil)).map(\.name) == ["snapshot", "subscribed"])
        let refused = driver.receive(&session, .subscribe(screen: "c", have: nil))
        #expect(refused.map(\.name) == ["error:too_many_subscriptions", "subscriptionRefused"])
        #expect(driver.receive(&session, .subscribe(screen: "a", have: nil)).map(\.name) == ["snapshot"])
        _ = driver.receive(&session, .unsubscribe(screen: "b"))
        #expect(driver.receive(&session, .subscribe(screen: "c", have: nil)).map(\.name) == ["snapshot", "subscribed"])
        #expect(session.ready?.subscriptions.count == 2)
    }

    @Test("subscribe sends a snapshot of the client's rendition, then .subscribed")
    func subscribeSnapshot() throws {
        var driver = Driver()
        let v1 = driver.publish("home", Tree.screen())
        var session = try driver.signIn(appVersion: "5.0.0")
        let steps = driver.receive(&session, .subscribe(screen: "home", have: nil))
        #expect(steps.map(\.name) == ["snapshot", "subscribed"])
        #expect(steps.last == .subscribed("home", RenderTarget(appVersion: SemanticVersion("5.0.0"))))
        let rendered = Driver.rendered(v1, for: RenderTarget(appVersion: SemanticVersion("5.0.0")))
        #expect(
            steps.first?.json
                == .object([
                    "type": .string("snapshot"), "screen": .string("home"), "version": .number(1),
                    "hash": .string(rendered.hash), "tree": rendered.tree,
                ]))
        // The capability filter applied: a 5.0.0 client does not see the 6.0.0 node.
        #expect(rendered.tree != v1.tree)
        let subscription = try #require(session.ready?.subscriptions.first)
        #expect(
            subscription.version === v1 && subscription.target == RenderTarget(appVersion: SemanticVersion("5.0.0")))
    }

    @Test("subscribe with have = the current hash answers unchanged")
    func subscribeUnchanged() throws {
        var driver = Driver()
        _ = driver.publish("home", Tree.screen())
        let v2 = driver.publish("home", Tree.screen(score: "1-0"))
        let hash = Driver.rendered(v2, for: RenderTarget(appVersion: SemanticVersion("5.0.0"))).hash
        let haves: [ClientMessage.Have] = [
            .init(version: 2, hash: hash), .init(version: nil, hash: hash), .init(version: 1, hash: hash),
        ]
        for have in haves {
            var session = try driver.signIn(appVersion: "5.0.0")
            let steps = driver.receive(&session, .subscribe(screen: "home", have: have))
            #expect(steps.map(\.name) == ["unchanged", "subscribed"], "have \(have)")
            #expect(
                steps.first?.json
                    == .object([
                        "type": .string("unchanged"), "screen": .string("home"), "version": .number(2),
                        "hash": .string(hash),
                    ]))
            #expect(session.ready?.subscriptions.first?.version === v2)
        }
    }

    @Test("subscribe with have = an older kept version (with or without its hash) sends a patch from it")
    func subscribePatchFromHave() throws {
        var driver = Driver()
        let v1 = driver.publish("home", Tree.screen())
        _ = driver.publish("home", Tree.screen(score: "1-0"))
        let v3 = driver.publish("home", Tree.screen(score: "2-0"))
        let target = RenderTarget(appVersion: SemanticVersion("5.0.0"))
        for hash in [Driver.rendered(v1, for: target).hash, nil] {
            var session = try driver.signIn(appVersion: "5.0.0")
            let steps = driver.receive(&session, .subscribe(screen: "home", have: .init(version: 1, hash: hash)))
            #expect(steps.map(\.name) == ["patch", "subscribed"])
            let patch = try #require(steps.first?.json)
            #expect(patch["from"] == .number(1) && patch["version"] == .number(3))
            #expect(patch["hash"] == .string(Driver.rendered(v3, for: target).hash))
            #expect(
                try Driver.apply(patch, to: Driver.rendered(v1, for: target).tree)
                    == Driver.rendered(v3, for: target).tree)
            #expect(session.ready?.subscriptions.first?.version === v3)
        }
    }

    @Test("subscribe with have = the current version and no hash answers unchanged")
    func subscribeHaveCurrentVersion() throws {
        var driver = Driver()
        _ = driver.publish("home", Tree.screen())
        var session = try driver.signIn()
        let steps = driver.receive(&session, .subscribe(screen: "home", have: .init(version: 1, hash: nil)))
        #expect(steps.map(\.name) == ["unchanged", "subscribed"])
    }

    @Test("subscribe with have = an older version but another hash, or a version no longer kept, sends a snapshot")
    func subscribeSnapshotWhenHaveIsUnusable() throws {
        var driver = Driver(keepVersions: 2)
        _ = driver.publish("home", Tree.screen())
        let v2 = driver.publish("home", Tree.screen(score: "1-0"))
        _ = driver.publish("home", Tree.screen(score: "2-0"))  // v1 is no longer kept
        let target = RenderTarget(appVersion: SemanticVersion("5.0.0"))
        let haves: [ClientMessage.Have] = [
            .init(version: 2, hash: String(repeating: "0", count: 64)), .init(version: 1, hash: nil),
            .init(version: 9, hash: nil), .init(version: nil, hash: Driver.rendered(v2, for: target).hash),
            .init(version: nil, hash: nil),
        ]
        for have in haves {
            var session = try driver.signIn(appVersion: "5.0.0")
            let steps = driver.receive(&session, .subscribe(screen: "home", have: have))
            #expect(steps.map(\.name) == ["snapshot", "subscribed"], "have \(have)")
            #expect(steps.first?.json?["version"] == .number(3))
        }
    }

    @Test("resubscribing answers again and moves the subscription, but does not emit a second .subscribed")
    func resubscribe() throws {
        var driver = Driver()
        _ = driver.publish("home", Tree.screen())
        var session = try driver.signIn()
        #expect(
            driver.receive(&session, .subscribe(screen: "home", have: nil)).map(\.name) == ["snapshot", "subscribed"])
        let v2 = driver.publish("home", Tree.screen(score: "1-0"))
        let hash = Driver.rendered(v2, for: try #require(session.ready?.target)).hash
        #expect(
            driver.receive(&session, .subscribe(screen: "home", have: .init(version: 1, hash: nil))).map(\.name) == [
                "patch"
            ])
        #expect(
            driver.receive(&session, .subscribe(screen: "home", have: .init(version: 2, hash: hash))).map(\.name) == [
                "unchanged"
            ])
        #expect(driver.receive(&session, .subscribe(screen: "home", have: nil)).map(\.name) == ["snapshot"])
        #expect(session.ready?.subscriptions.count == 1)
        #expect(session.ready?.subscriptions.first?.version === v2)
    }

    @Test("unsubscribe emits .unsubscribed; unsubscribing again, or from a screen never subscribed, is not_subscribed")
    func unsubscribe() throws {
        var driver = Driver()
        _ = driver.publish("home", Tree.screen())
        _ = driver.publish("away", Tree.screen(title: "Away"))
        var session = try driver.signIn()
        _ = driver.receive(&session, .subscribe(screen: "home", have: nil))
        _ = driver.receive(&session, .subscribe(screen: "away", have: nil))
        #expect(
            driver.receive(&session, .unsubscribe(screen: "home")) == [
                .unsubscribed("home", RenderTarget(appVersion: SemanticVersion("5.0.0")))
            ])
        #expect(session.ready?.subscriptions.map(\.version.name) == ["away"])
        let twice = driver.receive(&session, .unsubscribe(screen: "home"))
        #expect(twice.map(\.name) == ["error:not_subscribed"])
        #expect(twice.first?.json?["ref"] == .string("unsubscribe"))
        #expect(driver.receive(&session, .unsubscribe(screen: "nowhere")).map(\.name) == ["error:not_subscribed"])
        // The versions of a screen it left reach it no more.
        let v2 = driver.publish("home", Tree.screen(score: "1-0"))
        #expect(driver.versionPublished(session, v2).isEmpty)
        #expect(driver.versionPublished(session, v2, congested: true).isEmpty)
    }

    @Test("an ack of a live sync emits .acked once; a duplicate ack emits nothing; an unknown one is unknown_sync")
    func ack() throws {
        var driver = Driver()
        let sync = driver.sync(1, .user("u17"))
        driver.append(sync)
        var session = try driver.signIn(user: "u17")
        let steps = driver.receive(&session, .ack(sync: "s-1"))
        #expect(steps == [.acked(seq: 1)])
        if case .acked(let acked)? = driver.lastActions.first { #expect(acked === sync) }
        #expect(driver.receive(&session, .ack(sync: "s-1")).isEmpty)
        let unknown = driver.receive(&session, .ack(sync: "s-2"))
        #expect(unknown.map(\.name) == ["error:unknown_sync"])
        #expect(unknown.first?.json?["ref"] == .string("ack"))
        #expect(driver.receive(&session, .ack(sync: "nonsense")).map(\.name) == ["error:unknown_sync"])
    }

    @Test("rendered with no experiment exposure produces nothing")
    func renderedWithoutExposures() throws {
        var driver = Driver()
        _ = driver.publish("home", Tree.screen())
        var session = try driver.signIn()
        _ = driver.receive(&session, .subscribe(screen: "home", have: nil))
        #expect(driver.receive(&session, .rendered(screen: "home", version: 1)).isEmpty)
        #expect(driver.receive(&session, .rendered(screen: "nowhere", version: 1)).isEmpty)
    }

    // MARK: - New versions

    @Test("a patch starts from exactly the version the client holds")
    func patchFromHeldVersion() throws {
        var driver = Driver()
        let v1 = driver.publish("home", Tree.screen())
        var session = try driver.signIn(appVersion: "5.0.0")
        _ = driver.receive(&session, .subscribe(screen: "home", have: nil))
        let target = try #require(session.ready?.target)
        var previous = v1
        for (n, score) in ["1-0", "1-1", "2-1"].enumerated() {
            let next = driver.publish("home", Tree.screen(score: score))
            let steps = driver.versionPublished(session, next)
            #expect(steps.map(\.name) == ["patch"])
            let patch = try #require(steps.first?.json)
            #expect(patch["screen"] == .string("home"))
            #expect(patch["from"] == .number(Double(n + 1)) && patch["version"] == .number(Double(n + 2)))
            #expect(patch["hash"] == .string(Driver.rendered(next, for: target).hash))
            #expect(
                try Driver.apply(patch, to: Driver.rendered(previous, for: target).tree)
                    == Driver.rendered(next, for: target).tree)
            #expect(session.ready?.subscriptions.first?.version === next)
            previous = next
        }
    }

    @Test("a version the client already holds, or an older one, sends nothing")
    func staleVersion() throws {
        var driver = Driver()
        let v1 = driver.publish("home", Tree.screen())
        let v2 = driver.publish("home", Tree.screen(score: "1-0"))
        var session = try driver.signIn()
        _ = driver.receive(&session, .subscribe(screen: "home", have: nil))
        #expect(driver.versionPublished(session, v2).isEmpty)
        #expect(driver.versionPublished(session, v1).isEmpty)
        #expect(driver.versionPublished(session, v1, congested: true).isEmpty)
        #expect(session.ready?.subscriptions.first?.version === v2 && !session.needsCatchUp)
    }

    @Test("an identical tree sends nothing, and the next patch starts from the version the client holds")
    func identicalTree() throws {
        var driver = Driver()
        let v1 = driver.publish("home", Tree.screen())
        var session = try driver.signIn(appVersion: "5.0.0")
        _ = driver.receive(&session, .subscribe(screen: "home", have: nil))
        let v2 = driver.publish("home", Tree.screen())
        #expect(driver.versionPublished(session, v2).isEmpty)
        #expect(session.ready?.subscriptions.first?.version === v1)
        let v3 = driver.publish("home", Tree.screen(score: "1-0"))
        let steps = driver.versionPublished(session, v3)
        let patch = try #require(steps.first?.json)
        #expect(steps.map(\.name) == ["patch"])
        #expect(patch["from"] == .number(1) && patch["version"] == .number(3))
        let target = try #require(session.ready?.target)
        #expect(
            try Driver.apply(patch, to: Driver.rendered(v1, for: target).tree) == Driver.rendered(v3, for: target).tree)
    }

    @Test(
        "a change only inside a min_app_version node the client does not meet sends nothing; the next patch starts from the version the client holds"
    )
    func invisibleChange() throws {
        var driver = Driver()
        let v1 = driver.publish("home", Tree.screen())
        var session = try driver.signIn(appVersion: "5.0.0")
        _ = driver.receive(&session, .subscribe(screen: "home", have: nil))
        let v2 = driver.publish("home", Tree.screen(gated: "radar v2"))
        #expect(driver.versionPublished(session, v2).isEmpty)
        #expect(session.ready?.subscriptions.first?.version === v1)
        let v3 = driver.publish("home", Tree.screen(score: "1-0", gated: "radar v3"))
        let steps = driver.versionPublished(session, v3)
        #expect(steps.map(\.name) == ["patch"])
        let patch = try #require(steps.first?.json)
        #expect(patch["from"] == .number(1) && patch["version"] == .number(3))
        let target = try #require(session.ready?.target)
        #expect(
            try Driver.apply(patch, to: Driver.rendered(v1, for: target).tree) == Driver.rendered(v3, for: target).tree)
        #expect(patch["hash"] == .string(Driver.rendered(v3, for: target).hash))
        #expect(session.ready?.subscriptions.first?.version === v3)
    }

    @Test(
        "in one fan-out sharing a memo, each subscriber's patch starts from the version it holds, and the same start and rendition share the bytes"
    )
    func fanOutWithMemo() throws {
        var driver = Driver()
        let v1 = driver.publish("home", Tree.screen())
        var old = try driver.signIn(appVersion: "5.0.0")
        var oldToo = try driver.signIn(appVersion: "5.0.0")
        var new = try driver.signIn(appVersion: "6.0.0")
        _ = driver.receive(&old, .subscribe(screen: "home", have: nil))
        _ = driver.receive(&oldToo, .subscribe(screen: "home", have: nil))
        _ = driver.receive(&new, .subscribe(screen: "home", have: nil))
        // v2 changes only what 6.0.0 clients see.
        let v2 = driver.publish("home", Tree.screen(gated: "radar v2"))
        var memo = FanoutMemo()
        #expect(driver.versionPublished(old, v2, memo: &memo).isEmpty)
        #expect(driver.versionPublished(oldToo, v2, memo: &memo).isEmpty)
        let newSteps = driver.versionPublished(new, v2, memo: &memo)
        #expect(newSteps.map(\.name) == ["patch"])
        #expect(newSteps.first?.json?["from"] == .number(1))
        // v3 changes what everyone sees: the old clients from 1, the new one from 2.
        let v3 = driver.publish("home", Tree.screen(score: "1-0", gated: "radar v3"))
        memo = FanoutMemo()
        let oldSteps = driver.versionPublished(old, v3, memo: &memo)
        let oldFrame = driver.frames
        let oldTooSteps = driver.versionPublished(oldToo, v3, memo: &memo)
        #expect(driver.frames == oldFrame)
        let newSteps3 = driver.versionPublished(new, v3, memo: &memo)
        #expect(oldSteps.map(\.name) == ["patch"] && oldTooSteps == oldSteps && newSteps3.map(\.name) == ["patch"])
        #expect(oldSteps.first?.json?["from"] == .number(1))
        #expect(newSteps3.first?.json?["from"] == .number(2))
        let oldTarget = try #require(old.ready?.target)
        let newTarget = try #require(new.ready?.target)
        let oldPatch = try #require(oldSteps.first?.json)
        let newPatch = try #require(newSteps3.first?.json)
        #expect(
            try Driver.apply(oldPatch, to: Driver.rendered(v1, for: oldTarget).tree)
                == Driver.rendered(v3, for: oldTarget).tree)
        #expect(
            try Driver.apply(newPatch, to: Driver.rendered(v2, for: newTarget).tree)
                == Driver.rendered(v3, for: newTarget).tree)
    }

    // MARK: - Backpressure (DESIGN §9)

    @Test(
        "congested: a new version is coalesced and nothing is sent; drained sends one catch-up patch from the held version to the current one"
    )
    func coalescedVersions() throws {
        var driver = Driver()
        let v1 = driver.publish("home", Tree.screen())
        var session = try driver.signIn(appVersion: "5.0.0")
        _ = driver.receive(&session, .subscribe(screen: "home", have: nil))
        let v2 = driver.publish("home", Tree.screen(score: "1-0"))
        #expect(driver.versionPublished(session, v2, congested: true) == [.coalesced])
        #expect(session.needsCatchUp)
        let v3 = driver.publish("home", Tree.screen(score: "2-0"))
        #expect(driver.versionPublished(session, v3, congested: true) == [.coalesced])
        #expect(session.ready?.subscriptions.first?.version === v1)
        let steps = driver.drained(session)
        #expect(steps.map(\.name) == ["patch"])
        let patch = try #require(steps.first?.json)
        #expect(patch["from"] == .number(1) && patch["version"] == .number(3))
        let target = try #require(session.ready?.target)
        #expect(
            try Driver.apply(patch, to: Driver.rendered(v1, for: target).tree) == Driver.rendered(v3, for: target).tree)
        #expect(!session.needsCatchUp && session.ready?.subscriptions.first?.version === v3)
        #expect(driver.drained(session).isEmpty)
    }

    @Test("drained with nothing held back does nothing")
    func drainedWithoutCatchUp() throws {
        var driver = Driver()
        _ = driver.publish("home", Tree.screen())
        var session = try driver.signIn()
        _ = driver.receive(&session, .subscribe(screen: "home", have: nil))
        _ = driver.publish("home", Tree.screen(score: "1-0"))
        #expect(driver.drained(session).isEmpty)
        #expect(session.ready?.subscriptions.first?.version.version == 1)
    }

    @Test("a catch-up to a rendition the client already has sends nothing and clears the catch-up")
    func catchUpToSameRendition() throws {
        var driver = Driver()
        let v1 = driver.publish("home", Tree.screen())
        var session = try driver.signIn(appVersion: "5.0.0")
        _ = driver.receive(&session, .subscribe(screen: "home", have: nil))
        let v2 = driver.publish("home", Tree.screen(gated: "radar v2"))
        #expect(driver.versionPublished(session, v2, congested: true) == [.coalesced])
        #expect(driver.drained(session).isEmpty)
        #expect(!session.needsCatchUp && session.ready?.subscriptions.first?.version === v1)
        let v3 = driver.publish("home", Tree.screen(score: "1-0"))
        #expect(driver.versionPublished(session, v3).first?.json?["from"] == .number(1))
    }

    @Test("between the watermarks a new version goes out from the held version, and drained adds nothing")
    func betweenWatermarks() throws {
        var driver = Driver()
        _ = driver.publish("home", Tree.screen())
        var session = try driver.signIn()
        _ = driver.receive(&session, .subscribe(screen: "home", have: nil))
        let v2 = driver.publish("home", Tree.screen(score: "1-0"))
        #expect(driver.versionPublished(session, v2, congested: true) == [.coalesced])
        let v3 = driver.publish("home", Tree.screen(score: "2-0"))
        let steps = driver.versionPublished(session, v3)  // not congested, catch-up still pending
        #expect(steps.map(\.name) == ["patch"])
        #expect(steps.first?.json?["from"] == .number(1) && steps.first?.json?["version"] == .number(3))
        #expect(driver.drained(session).isEmpty)
        #expect(!session.needsCatchUp)
    }

    @Test(
        "collapsed syncs: while congested the newest per key is held (mandatory if any was); drained sends them in seq order before the catch-up patches"
    )
    func collapsedSyncs() throws {
        var driver = Driver()
        _ = driver.publish("home", Tree.screen())
        var session = try driver.signIn(user: "u17")
        _ = driver.receive(&session, .subscribe(screen: "home", have: nil))
        let s10 = driver.sync(10, .all, collapse: "k", mandatory: true)
        let s11 = driver.sync(11, .user("u17"), collapse: "z")
        let s12 = driver.sync(12, .all, collapse: "k")
        let s13 = driver.sync(13, .all, collapse: "a")
        for sync in [s10, s11, s12, s13] {
            #expect(driver.syncArrived(session, sync, congested: true) == [.coalesced])
        }
        let v2 = driver.publish("home", Tree.screen(score: "1-0"))
        #expect(driver.versionPublished(session, v2, congested: true) == [.coalesced])
        let steps = driver.drained(session)
        #expect(steps.map(\.name) == ["sync", "delivered", "sync", "delivered", "sync", "delivered", "patch"])
        #expect(steps.compactMap(\.syncSeq) == [11, 12, 13])
        #expect(steps.compactMap(\.deliveredSeq) == [11, 12, 13])
        #expect(
            steps.filter { $0.name == "sync" }.map { $0.json?["mandatory"] == .bool(true) } == [false, true, false])
        #expect(driver.frames[0] == s11.frame && driver.frames[2] == s13.frame)
        #expect(steps.last?.json?["from"] == .number(1))
        #expect(driver.drained(session).isEmpty)
    }

    @Test("while congested a collapse key keeps the sync with the highest seq, whatever order they arrive in (spread)")
    func collapsedSyncsOutOfOrder() throws {
        var driver = Driver()
        let session = try driver.signIn(user: "u17")
        // s21 was sent without spread; s20, spread over a window, reaches this client after it.
        let s20 = driver.sync(20, .all, collapse: "k")
        let s21 = driver.sync(21, .all, collapse: "k", mandatory: true)
        #expect(driver.syncArrived(session, s21, congested: true) == [.coalesced])
        #expect(driver.syncArrived(session, s20, congested: true) == [.coalesced])
        let steps = driver.drained(session)
        #expect(steps.compactMap(\.syncSeq) == [21])
        #expect(steps.first?.json?["mandatory"] == .bool(true))
    }

    @Test(
        "a sync sent live while an older one with its collapse key is held supersedes it: the client never gets the older one after it, and the last one it gets is mandatory if any was"
    )
    func liveSyncSupersedesHeldOne() throws {
        var driver = Driver()
        let session = try driver.signIn(user: "u17")
        let s30 = driver.sync(30, .all, collapse: "k", mandatory: true)
        let s31 = driver.sync(31, .all, collapse: "k")
        #expect(driver.syncArrived(session, s30, congested: true) == [.coalesced])
        // Below the high watermark again, but not yet drained below the low one.
        let live = driver.syncArrived(session, s31)
        let drained = driver.drained(session)
        let sent = (live + drained).filter { $0.name == "sync" }
        let seqs = sent.compactMap(\.syncSeq)
        #expect(seqs == seqs.sorted() && Set(seqs).count == seqs.count, "sent \(seqs)")
        #expect(sent.last?.syncSeq == 31 && sent.last?.json?["mandatory"] == .bool(true))
    }

    @Test("a sync without a collapse key is sent even while congested")
    func uncollapsedSyncWhileCongested() throws {
        var driver = Driver()
        let session = try driver.signIn(user: "u17")
        let sync = driver.sync(5, .user("u17"), mandatory: true)
        let steps = driver.syncArrived(session, sync, congested: true)
        #expect(steps.map(\.name) == ["sync", "delivered"])
        #expect(steps.compactMap(\.syncSeq) == [5] && steps.last == .delivered(seq: 5))
        #expect(driver.frames == [sync.frame])
        #expect(!session.needsCatchUp)
        #expect(driver.drained(session).isEmpty)
    }

    @Test("a sync arriving when not congested is sent with its own frame, then counted as delivered")
    func syncArrived() throws {
        var driver = Driver()
        let session = try driver.signIn(user: "u17")
        let sync = driver.sync(3, .all, hint: .object(["bundle": .string("5.2.1")]), collapse: "k")
        let steps = driver.syncArrived(session, sync)
        #expect(steps.map(\.name) == ["sync", "delivered"])
        #expect(driver.frames == [sync.frame])
        #expect(
            steps.first?.json
                == .object([
                    "type": .string("sync"), "id": .string("s-3"), "seq": .number(3), "reason": .string("hotfix"),
                    "scope": .string("bundle"), "hint": .object(["bundle": .string("5.2.1")]),
                    "jitter_ms": .number(4000),
                ]))
        if case .delivered(let delivered)? = driver.lastActions.last { #expect(delivered === sync) }
    }

    @Test("experiment changes while congested are coalesced and caught up at drain")
    func experimentsWhileCongested() throws {
        var driver = Driver()
        let v1 = driver.publish("home", Tree.screen())
        var session = try driver.signIn(user: "u17")
        _ = driver.receive(&session, .subscribe(screen: "home", have: nil))
        driver.setExperiments([try Driver.experiment(overrides: ["u17": "compact"])])
        #expect(driver.screenMayHaveChanged(session, screen: "home", congested: true) == [.coalesced])
        #expect(session.needsCatchUp)
        let steps = driver.drained(session)
        #expect(steps.map(\.name) == ["exposure", "retargeted", "patch"])
        let base = try #require(session.ready?.target)
        let target = try #require(session.ready?.subscriptions.first?.target)
        #expect(steps[1] == .retargeted("home", from: base, to: target))
        #expect(target.variantPatches.map(\.label) == ["layout@1=compact"])
        let patch = try #require(steps.last?.json)
        #expect(
            try Driver.apply(patch, to: Driver.rendered(v1, for: base).tree) == Driver.rendered(v1, for: target).tree)
        #expect(Driver.rendered(v1, for: target).tree["title"] == .string("Compact title"))
    }

    // MARK: - Screen deleted

    @Test("a deleted screen unsubscribes the client and tells it the screen is gone; later versions send nothing")
    func screenDeleted() throws {
        var driver = Driver()
        _ = driver.publish("home", Tree.screen())
        _ = driver.publish("away", Tree.screen(title: "Away"))
        var session = try driver.signIn()
        _ = driver.receive(&session, .subscribe(screen: "home", have: nil))
        _ = driver.receive(&session, .subscribe(screen: "away", have: nil))
        let steps = driver.screenDeleted(session, "home")
        #expect(
            steps == [
                .unsubscribed("home", RenderTarget(appVersion: SemanticVersion("5.0.0"))),
                .send(.object(["type": .string("gone"), "screen": .string("home")])),
            ])
        #expect(session.ready?.subscriptions.map(\.version.name) == ["away"])
        let recreated = driver.publish("home", Tree.screen())
        #expect(driver.versionPublished(session, recreated).isEmpty)
        #expect(driver.receive(&session, .unsubscribe(screen: "home")).map(\.name) == ["error:not_subscribed"])
    }

    @Test("a deleted screen the client does not subscribe to produces nothing")
    func otherScreenDeleted() throws {
        var driver = Driver()
        _ = driver.publish("home", Tree.screen())
        _ = driver.publish("away", Tree.screen(title: "Away"))
        var session = try driver.signIn()
        _ = driver.receive(&session, .subscribe(screen: "home", have: nil))
        #expect(driver.screenDeleted(session, "away").isEmpty)
        #expect(session.ready?.subscriptions.count == 1)
    }

    // MARK: - Timer in .ready

    @Test("in .ready the timer does nothing, even past the hello deadline")
    func timerWhenReady() throws {
        var driver = Driver()
        var session = try driver.signIn()
        #expect(driver.timerFired(&session, now: Driver.deadline).isEmpty)
        #expect(driver.timerFired(&session, now: .max).isEmpty)
        #expect(StateKind(session) == .ready && session.helloDeadline == nil)
    }

    // MARK: - Closed

    /// The ways a session ends.
    enum Closing: String, CaseIterable, Sendable {
        case refusedHello, helloTimeout, closedWhileWaiting, closedWhenReady, closedWhileCongested
    }

    @Test("after the session is closed, no input produces an action", arguments: Closing.allCases)
    func closedIsSilent(_ closing: Closing) throws {
        var driver = Driver(allowAnonymous: closing != .refusedHello)
        _ = driver.publish("home", Tree.screen())
        driver.setExperiments([try Driver.experiment(overrides: ["u17": "compact"])])
        let s1 = driver.sync(1, .all)
        driver.append(s1)
        var session = Session(helloDeadline: Driver.deadline, upgradeToken: nil)
        switch closing {
        case .refusedHello:
            #expect(driver.receive(&session, Driver.hello(device: "d-1")).last?.name == "close")
        case .helloTimeout:
            #expect(driver.timerFired(&session, now: Driver.deadline).map(\.name) == ["close"])
        case .closedWhileWaiting:
            session.closed()
        case .closedWhenReady, .closedWhileCongested:
            session = try driver.signIn(user: "u17")
            _ = driver.receive(&session, .subscribe(screen: "home", have: nil))
            if closing == .closedWhileCongested {
                let v2 = driver.publish("home", Tree.screen(score: "9-9"))
                #expect(driver.versionPublished(session, v2, congested: true) == [.coalesced])
            }
            session.closed()
        }
        #expect(StateKind(session) == .closed && session.isClosed && session.ready == nil)

        let v3 = driver.publish("home", Tree.screen(score: "1-0"))
        let messages: [ClientMessage] = [
            Driver.hello(token: Driver.token(user: "u17")), Driver.hello(device: "d-1"),
            .subscribe(screen: "home", have: nil), .subscribe(screen: "home", have: .init(version: 1)),
            .unsubscribe(screen: "home"), .ack(sync: "s-1"), .ack(sync: "s-9"), .rendered(screen: "home", version: 1),
        ]
        for message in messages { #expect(driver.receive(&session, message).isEmpty, "\(message)") }
        #expect(driver.receivedInvalid(session, WireError(code: "bad_json", message: "x", ref: nil)).isEmpty)
        #expect(driver.versionPublished(session, v3).isEmpty)
        #expect(driver.versionPublished(session, v3, congested: true).isEmpty)
        #expect(driver.screenMayHaveChanged(session, screen: "home").isEmpty)
        #expect(driver.screenMayHaveChanged(session, screen: "home", congested: true).isEmpty)
        #expect(driver.syncArrived(session, driver.sync(2, .all)).isEmpty)
        #expect(driver.syncArrived(session, driver.sync(3, .all, collapse: "k"), congested: true).isEmpty)
        #expect(driver.drained(session).isEmpty)
        #expect(driver.timerFired(&session, now: Driver.deadline).isEmpty)
        #expect(driver.timerFired(&session, now: .max).isEmpty)
        #expect(driver.screenDeleted(session, "home").isEmpty)
        session.closed()
        #expect(StateKind(session) == .closed && !session.needsCatchUp)
    }

    // MARK: - Experiments (DESIGN §6)

    @Test("a subscriber assigned a variant gets the variant's tree and one served exposure per session")
    func variantTree() throws {
        var driver = Driver()
        let v1 = driver.publish("home", Tree.screen())
        driver.setExperiments([try Driver.experiment(overrides: ["u17": "compact"])])
        var session = try driver.signIn(user: "u17")
        let steps = driver.receive(&session, .subscribe(screen: "home", have: nil))
        #expect(steps.map(\.name) == ["snapshot", "exposure", "subscribed"])
        #expect(steps.first?.json?["tree"]?["title"] == .string("Compact title"))
        #expect(
            steps[1]
                == .exposure(.served, experiment: "layout", variant: "compact", unit: "u17", screen: "home", version: 1)
        )
        if case .result(let exposure, _)? = driver.lastActions.dropFirst().first { #expect(exposure.at == driver.now) }
        let target = try #require(session.ready?.subscriptions.first?.target)
        #expect(steps.first?.json?["hash"] == .string(Driver.rendered(v1, for: target).hash))
        // Resubscribing and new versions serve the same variant: no second exposure.
        #expect(driver.receive(&session, .subscribe(screen: "home", have: nil)).map(\.name) == ["snapshot"])
        let v2 = driver.publish("home", Tree.screen(score: "1-0"))
        let patch = driver.versionPublished(session, v2)
        #expect(patch.map(\.name) == ["patch"])
        let ops = try #require(patch.first?.json)
        #expect(
            try Driver.apply(ops, to: Driver.rendered(v1, for: target).tree) == Driver.rendered(v2, for: target).tree)
        #expect(Driver.rendered(v2, for: target).tree["title"] == .string("Compact title"))
        // Another session of the same user is exposed again.
        var other = try driver.signIn(user: "u17")
        #expect(
            driver.receive(&other, .subscribe(screen: "home", have: nil)).map(\.name) == [
                "snapshot", "exposure", "subscribed",
            ])
    }

    @Test("a variant without a merge patch for the screen is an exposure too, with the base tree")
    func controlVariantExposure() throws {
        var driver = Driver()
        let v1 = driver.publish("home", Tree.screen())
        driver.setExperiments([try Driver.experiment(overrides: ["u17": "control"], controlPatch: false)])
        var session = try driver.signIn(user: "u17")
        let steps = driver.receive(&session, .subscribe(screen: "home", have: nil))
        #expect(steps.map(\.name) == ["snapshot", "exposure", "subscribed"])
        let base = try #require(session.ready?.target)
        #expect(steps.first?.json?["hash"] == .string(Driver.rendered(v1, for: base).hash))
        #expect(
            steps[1]
                == .exposure(.served, experiment: "layout", variant: "control", unit: "u17", screen: "home", version: 1)
        )
    }

    @Test("rendered confirms an exposure once, for its screen, at or after the version served")
    func renderedConfirms() throws {
        var driver = Driver()
        _ = driver.publish("home", Tree.screen())
        _ = driver.publish("away", Tree.screen(title: "Away"))
        _ = driver.publish("home", Tree.screen(score: "1-0"))
        driver.setExperiments([try Driver.experiment(overrides: ["u17": "compact"])])
        var session = try driver.signIn(user: "u17")
        _ = driver.receive(&session, .subscribe(screen: "away", have: nil))
        _ = driver.receive(&session, .subscribe(screen: "home", have: nil))
        #expect(driver.receive(&session, .rendered(screen: "away", version: 1)).isEmpty)
        #expect(driver.receive(&session, .rendered(screen: "home", version: 1)).isEmpty)
        #expect(
            driver.receive(&session, .rendered(screen: "home", version: 2)) == [
                .exposure(.confirmed, experiment: "layout", variant: "compact", unit: "u17", screen: "home", version: 2)
            ])
        #expect(driver.receive(&session, .rendered(screen: "home", version: 2)).isEmpty)
        #expect(driver.receive(&session, .rendered(screen: "home", version: 3)).isEmpty)
    }

    @Test(
        "an experiment starting on a subscribed screen patches the subscriber to the variant's tree; stopping it patches back"
    )
    func experimentStartsAndStops() throws {
        var driver = Driver()
        let v1 = driver.publish("home", Tree.screen())
        var session = try driver.signIn(user: "u17")
        _ = driver.receive(&session, .subscribe(screen: "home", have: nil))
        let base = Driver.rendered(v1, for: try #require(session.ready?.target))
        #expect(driver.screenMayHaveChanged(session, screen: "home").isEmpty)  // nothing changed yet

        driver.setExperiments([try Driver.experiment(overrides: ["u17": "compact"])], generation: 2)
        let started = driver.screenMayHaveChanged(session, screen: "home")
        #expect(started.map(\.name) == ["exposure", "retargeted", "patch"])
        #expect(
            started.first
                == .exposure(.served, experiment: "layout", variant: "compact", unit: "u17", screen: "home", version: 1)
        )
        let startPatch = try #require(started.last?.json)
        let variant = try Driver.apply(startPatch, to: base.tree)
        #expect(variant["title"] == .string("Compact title"))
        let target = try #require(session.ready?.subscriptions.first?.target)
        let baseTarget = try #require(session.ready?.target)
        #expect(started[1] == .retargeted("home", from: baseTarget, to: target))
        #expect(started.last?.json?["hash"] == .string(Driver.rendered(v1, for: target).hash))
        #expect(driver.screenMayHaveChanged(session, screen: "home").isEmpty)  // already there

        driver.setExperiments([try Driver.experiment(status: "stopped", overrides: ["u17": "compact"])], generation: 3)
        let stopped = driver.screenMayHaveChanged(session, screen: "home")
        #expect(stopped.map(\.name) == ["retargeted", "patch"])
        #expect(stopped.first == .retargeted("home", from: target, to: baseTarget))
        let stopPatch = try #require(stopped.last?.json)
        #expect(try Driver.apply(stopPatch, to: variant) == base.tree)
        #expect(stopped.last?.json?["hash"] == .string(base.hash))
    }

    @Test(
        "experimentsChanged for a client whose rendition does not change, or for a screen it does not watch, sends nothing"
    )
    func experimentsChangedNothingToSend() throws {
        var driver = Driver()
        _ = driver.publish("home", Tree.screen())
        _ = driver.publish("away", Tree.screen(title: "Away"))
        var session = try driver.signIn(user: "u17")
        _ = driver.receive(&session, .subscribe(screen: "home", have: nil))
        driver.setExperiments([try Driver.experiment(traffic: 0, overrides: ["u99": "compact"])])
        #expect(driver.screenMayHaveChanged(session, screen: "home").isEmpty)
        #expect(driver.screenMayHaveChanged(session, screen: "away").isEmpty)
        #expect(driver.screenMayHaveChanged(session, screen: "nowhere").isEmpty)
    }

    @Test(
        "experimentsChanged brings a subscriber left on an older version to the current one, from the version it holds")
    func experimentsChangedFromHeldVersion() throws {
        var driver = Driver()
        let v1 = driver.publish("home", Tree.screen())
        var session = try driver.signIn(user: "u17", appVersion: "5.0.0")
        _ = driver.receive(&session, .subscribe(screen: "home", have: nil))
        let v2 = driver.publish("home", Tree.screen(gated: "radar v2"))
        #expect(driver.versionPublished(session, v2).isEmpty)
        driver.setExperiments([try Driver.experiment(overrides: ["u17": "compact"])])
        let steps = driver.screenMayHaveChanged(session, screen: "home")
        #expect(steps.map(\.name) == ["exposure", "retargeted", "patch"])
        let patch = try #require(steps.last?.json)
        #expect(patch["from"] == .number(1) && patch["version"] == .number(2))
        let base = try #require(session.ready?.target)
        let target = try #require(session.ready?.subscriptions.first?.target)
        #expect(
            try Driver.apply(patch, to: Driver.rendered(v1, for: base).tree) == Driver.rendered(v2, for: target).tree)
    }

    @Test("a sticky experiment emits .stickyAssigned on a unit's first assignment, and not again in the session")
    func stickyFirstAssignment() throws {
        var driver = Driver()
        _ = driver.publish("home", Tree.screen())
        _ = driver.publish("away", Tree.screen(title: "Away"))
        let experiment = try Driver.experiment(sticky: true, awayPatch: true)
        driver.setExperiments([experiment])
        let expected = try #require(Assignment.assign(experiment, unit: "u17", client: nil, view: nil).variant)
        var session = try driver.signIn(user: "u17")
        let steps = driver.receive(&session, .subscribe(screen: "home", have: nil))
        #expect(steps.map(\.name) == ["stickyAssigned", "snapshot", "exposure", "subscribed"])
        #expect(steps.first == .stickyAssigned(experiment: "layout", unit: "u17", variant: expected))
        #expect(steps[1].json?["tree"]?["title"] == .string(expected == "compact" ? "Compact title" : "Control title"))
        #expect(driver.receive(&session, .subscribe(screen: "home", have: nil)).map(\.name) == ["snapshot"])
        let away = driver.receive(&session, .subscribe(screen: "away", have: nil))
        #expect(!away.map(\.name).contains("stickyAssigned"))
    }

    @Test("a sticky value already in the view wins over the bucket and emits no .stickyAssigned")
    func stickyAlreadyRecorded() throws {
        var driver = Driver()
        _ = driver.publish("home", Tree.screen())
        let experiment = try Driver.experiment(sticky: true)
        driver.setExperiments([experiment])
        let bucketed = try #require(Assignment.assign(experiment, unit: "u17", client: nil, view: nil).variant)
        let recorded = bucketed == "compact" ? "control" : "compact"
        driver.view.apply(.stickyRecorded(experiment: "layout", unit: "u17", variant: recorded), keepVersions: 16)
        var session = try driver.signIn(user: "u17")
        let steps = driver.receive(&session, .subscribe(screen: "home", have: nil))
        #expect(steps.map(\.name) == ["snapshot", "exposure", "subscribed"])
        #expect(
            steps.first?.json?["tree"]?["title"] == .string(recorded == "compact" ? "Compact title" : "Control title"))
        #expect(
            steps[1]
                == .exposure(.served, experiment: "layout", variant: recorded, unit: "u17", screen: "home", version: 1))
    }

    @Test("an override on a sticky experiment is not recorded as a sticky assignment")
    func stickyOverride() throws {
        var driver = Driver()
        _ = driver.publish("home", Tree.screen())
        driver.setExperiments([try Driver.experiment(sticky: true, overrides: ["u17": "compact"])])
        var session = try driver.signIn(user: "u17")
        #expect(
            driver.receive(&session, .subscribe(screen: "home", have: nil)).map(\.name) == [
                "snapshot", "exposure", "subscribed",
            ])
    }

    @Test(
        "resubscribing after the client's render target changed emits .retargeted from the old target, not .subscribed")
    func resubscribeRetargets() throws {
        var driver = Driver()
        _ = driver.publish("home", Tree.screen())
        var session = try driver.signIn(user: "u17")
        #expect(
            driver.receive(&session, .subscribe(screen: "home", have: nil)).map(\.name) == ["snapshot", "subscribed"])
        let base = try #require(session.ready?.target)
        driver.setExperiments([try Driver.experiment(overrides: ["u17": "compact"])])
        let steps = driver.receive(&session, .subscribe(screen: "home", have: nil))
        #expect(steps.map(\.name) == ["snapshot", "exposure", "retargeted"])
        #expect(steps.first?.json?["tree"]?["title"] == .string("Compact title"))
        let target = try #require(session.ready?.subscriptions.first?.target)
        #expect(target != base && steps.last == .retargeted("home", from: base, to: target))
        #expect(driver.receive(&session, .subscribe(screen: "home", have: nil)).map(\.name) == ["snapshot"])
        #expect(driver.receive(&session, .unsubscribe(screen: "home")) == [.unsubscribed("home", target)])
    }

    @Test(
        "a new version reaching a client whose render target changed emits .retargeted, and the patch starts from the rendition the client holds"
    )
    func versionPublishedRetargets() throws {
        var driver = Driver()
        let v1 = driver.publish("home", Tree.screen())
        var session = try driver.signIn(user: "u17")
        _ = driver.receive(&session, .subscribe(screen: "home", have: nil))
        let base = try #require(session.ready?.target)
        // The experiment starts; the version arrives before this session hears of the change.
        driver.setExperiments([try Driver.experiment(overrides: ["u17": "compact"])])
        let v2 = driver.publish("home", Tree.screen(score: "1-0"))
        let steps = driver.versionPublished(session, v2)
        #expect(steps.map(\.name) == ["exposure", "retargeted", "patch"])
        let target = try #require(session.ready?.subscriptions.first?.target)
        #expect(steps[1] == .retargeted("home", from: base, to: target))
        let patch = try #require(steps.last?.json)
        #expect(patch["from"] == .number(1) && patch["version"] == .number(2))
        #expect(
            try Driver.apply(patch, to: Driver.rendered(v1, for: base).tree) == Driver.rendered(v2, for: target).tree)
        #expect(driver.screenMayHaveChanged(session, screen: "home").isEmpty)
    }

    @Test("an anonymous client is assigned and exposed by its device")
    func anonymousUnit() throws {
        var driver = Driver()
        _ = driver.publish("home", Tree.screen())
        driver.setExperiments([try Driver.experiment(overrides: ["d-42": "compact"])])
        var session = Session(helloDeadline: Driver.deadline, upgradeToken: nil)
        _ = driver.receive(&session, Driver.hello(device: "d-42"))
        let steps = driver.receive(&session, .subscribe(screen: "home", have: nil))
        #expect(steps.first?.json?["tree"]?["title"] == .string("Compact title"))
        #expect(
            steps[1]
                == .exposure(
                    .served, experiment: "layout", variant: "compact", unit: "d-42", screen: "home", version: 1))
    }
}

// MARK: - Helpers

extension SessionTests {
    /// The session's state as a value tests can compare (`Session.State` holds a class).
    enum StateKind: Equatable {
        case awaitingHello(deadline: UInt64, upgradeToken: String?)
        case awaitingKey(kid: String, held: Int)
        case ready
        case closed

        init(_ session: Session) {
            switch session.state {
            case .awaitingHello(let deadline, let upgradeToken):
                self = .awaitingHello(deadline: deadline, upgradeToken: upgradeToken)
            case .awaitingKey(let parked): self = .awaitingKey(kid: parked.kid, held: parked.held.count)
            case .ready: self = .ready
            case .closed: self = .closed
            }
        }
    }

    enum ExposureKind: Equatable { case served, confirmed }

    /// One action as a test reads it: a `.send` frame decoded to its JSON, objects by their ids.
    enum Step: Equatable {
        case send(JSONValue)
        case close(CloseCode, reason: String)
        case signedIn(user: String?, device: String)
        case subscribed(String, RenderTarget)
        case retargeted(String, from: RenderTarget, to: RenderTarget)
        case unsubscribed(String, RenderTarget)
        case delivered(seq: Int)
        case acked(seq: Int)
        case exposure(ExposureKind, experiment: String, variant: String, unit: String, screen: String, version: Int)
        case goal(String, value: Double?, unit: String, sessionWasServed: Bool)
        case release(ResultEvent.ReleaseReport, unit: String)
        case stickyAssigned(experiment: String, unit: String, variant: String)
        case coalesced
        case subscriptionRefused
        case awaitsScreen(String)
        case stoppedAwaiting(String)
        case sendHeartbeats
        case pushDeviceRegistered(PushDevice)
        case pushDeviceRemoved(DeviceKey)
        case renderErrorReported(RenderErrorReport)
        case awaitsKey(String)

        init(_ action: Session.Action) {
            switch action {
            case .send(let frame): self = .send(Step.decode(frame))
            case .close(let code, let reason): self = .close(code, reason: reason)
            case .signedIn(let ready): self = .signedIn(user: ready.attributes.user, device: ready.attributes.device)
            case .subscribed(let screen, let target): self = .subscribed(screen, target)
            case .retargeted(let change): self = .retargeted(change.screen, from: change.from, to: change.to)
            case .unsubscribed(let screen, let target): self = .unsubscribed(screen, target)
            case .delivered(let sync): self = .delivered(seq: sync.seq)
            case .acked(let sync): self = .acked(seq: sync.seq)
            case .result(let event, let sessionWasServed):
                switch event.kind {
                case .served(let e):
                    self = .exposure(
                        .served, experiment: e.experiment, variant: e.variant, unit: event.unit, screen: e.screen,
                        version: e.version)
                case .confirmed(let e):
                    self = .exposure(
                        .confirmed, experiment: e.experiment, variant: e.variant, unit: event.unit, screen: e.screen,
                        version: e.version)
                case .goal(let name, let value):
                    self = .goal(name, value: value, unit: event.unit, sessionWasServed: sessionWasServed)
                case .release(let report):
                    self = .release(report, unit: event.unit)
                }
            case .stickyAssigned(let experiment, let unit, let variant):
                self = .stickyAssigned(experiment: experiment, unit: unit, variant: variant)
            case .coalesced: self = .coalesced
            case .subscriptionRefused: self = .subscriptionRefused
            case .awaitsScreen(let screen): self = .awaitsScreen(screen)
            case .stoppedAwaiting(let screen): self = .stoppedAwaiting(screen)
            case .sendHeartbeats: self = .sendHeartbeats
            case .pushDeviceRegistered(let device): self = .pushDeviceRegistered(device)
            case .renderErrorReported(let report): self = .renderErrorReported(report)
            case .pushDeviceRemoved(let key): self = .pushDeviceRemoved(key)
            case .awaitsKey(let kid): self = .awaitsKey(kid)
            }
        }

        /// A short name: the message type of a send ("error:<code>" for errors), else the action.
        var name: String {
            switch self {
            case .send(let json):
                let type = json["type"]?.stringValue ?? "?"
                return type == "error" ? "error:" + (json["code"]?.stringValue ?? "?") : type
            case .close: return "close"
            case .signedIn: return "signedIn"
            case .subscribed: return "subscribed"
            case .retargeted: return "retargeted"
            case .unsubscribed: return "unsubscribed"
            case .delivered: return "delivered"
            case .acked: return "acked"
            case .exposure: return "exposure"
            case .goal: return "goal"
            case .release: return "release"
            case .stickyAssigned: return "stickyAssigned"
            case .coalesced: return "coalesced"
            case .subscriptionRefused: return "subscriptionRefused"
            case .awaitsScreen: return "awaitsScreen"
            case .stoppedAwaiting: return "stoppedAwaiting"
            case .sendHeartbeats: return "sendHeartbeats"
            case .pushDeviceRegistered: return "pushDeviceRegistered"
            case .pushDeviceRemoved: return "pushDeviceRemoved"
            case .renderErrorReported: return "renderErrorReported"
            case .awaitsKey: return "awaitsKey"
            }
        }

        var json: JSONValue? {
            if case .send(let json) = self { return json }
            return nil
        }

        /// The seq of a `sync` message.
        var syncSeq: Int? { json?["type"] == .string("sync") ? json?["seq"]?.intValue : nil }

        var deliveredSeq: Int? {
            if case .delivered(let seq) = self { return seq }
            return nil
        }

        /// A complete unmasked text frame (RFC 6455 §5.2) → its JSON payload.
        static func decode(_ frame: [UInt8]) -> JSONValue {
            guard frame.count >= 2 else {
                Issue.record("a frame of \(frame.count) bytes")
                return .null
            }
            #expect(frame[0] == 0x81, "FIN + text")
            #expect(frame[1] & 0x80 == 0, "a server frame is not masked")
            let header: Int
            let length: Int
            switch frame[1] & 0x7F {
            case 126:  // 16-bit extended length
                header = 4
                length = Int(frame[2]) << 8 | Int(frame[3])
            case 127:  // 64-bit extended length
                header = 10
                length = frame[2..<10].reduce(0) { $0 << 8 | Int($1) }
            case let short:
                header = 2
                length = Int(short)
            }
            #expect(frame.count == header + length, "the payload length matches the frame")
            do {
                return try JSONReader.parse(Array(frame[header...]))
            } catch {
                Issue.record("the payload is not JSON: \(error)")
                return .null
            }
        }
    }

    /// Screen trees big enough that a one-leaf change is sent as a patch (DESIGN §4: a patch is
    /// sent only when smaller than the snapshot), with a node only 6.0.0 clients see.
    enum Tree {
        static func screen(score: String = "0-0", gated: String = "radar v1", title: String = "Match breakdown")
            -> JSONValue
        {
            try! JSONReader.parse(
                """
                {"type":"screen","title":"\(title)","children":[
                  {"id":"score","type":"text","text":"\(score)"},
                  {"id":"summary","type":"text","text":"A summary long enough that a one-leaf patch beats the snapshot"},
                  {"id":"lineup","type":"list","items":["one","two","three","four","five","six","seven","eight"]},
                  {"id":"gated","type":"chart","min_app_version":"6.0.0","title":"\(gated)"}
                ]}
                """)
        }
    }

    /// A loop's side of a session: the hub view, the settings and a wall clock; it calls one
    /// session input and returns the actions as `Step`s, keeping the raw ones of the last call.
    struct Driver {
        static let deadline: UInt64 = 5_000_000_000
        static let secret = Array("session-tests-secret".utf8)
        static let nowSeconds = 1_700_000_000
        static let epoch = "e-00000000000000aa"

        var view = HubView()
        var settings: Session.Settings
        var now = Driver.nowSeconds * 1000
        /// The loop's rendition cache, which the session renders and encodes through.
        var cache = RenditionCache()
        let keepVersions: Int
        /// The actions of the last call, and their `.send` frames.
        private(set) var lastActions: [Session.Action] = []
        var frames: [[UInt8]] {
            lastActions.compactMap {
                if case .send(let frame) = $0 { return frame }
                return nil
            }
        }

        init(allowAnonymous: Bool = true, keepVersions: Int = 16) {
            settings = Session.Settings(
                allowAnonymous: allowAnonymous, heartbeatSeconds: 25, tokens: JWTVerifier(secret: Driver.secret),
                epoch: Driver.epoch)
            self.keepVersions = keepVersions
        }

        // Building the hub state

        static func token(
            user: String?, cohorts: [String] = [], expires: Int = Driver.nowSeconds + 3600,
            secret: [UInt8] = Driver.secret
        ) -> String {
            var claims: JSONObject = ["exp": .number(Double(expires))]
            if let user { claims["sub"] = .string(user) }
            if !cohorts.isEmpty { claims["cohorts"] = .array(cohorts.map(JSONValue.string)) }
            return JWTVerifier.sign(claims, secret: secret)
        }

        static func hello(
            token: String? = nil, device: String? = "d-1", platform: String? = "ios", appVersion: String? = "5.0.0",
            lastSync: Int? = nil, epoch: String? = nil, heartbeats: Bool = false, protocolVersion: Int = 1
        ) -> ClientMessage {
            .hello(
                ClientMessage.Hello(
                    protocolVersion: protocolVersion, token: token, device: device, platform: platform,
                    appVersion: appVersion, lastSync: lastSync, epoch: epoch, wantsHeartbeats: heartbeats))
        }

        /// Publishes the next version of `name` into the view (as the control plane's change would).
        mutating func publish(_ name: String, _ tree: JSONValue) -> ScreenVersion {
            let version = ScreenVersion(
                name: name, version: (view.current(name)?.version ?? 0) + 1, tree: tree, publishedAt: now)
            view.apply(.screenPublished(version, prepared: nil), keepVersions: keepVersions)
            return version
        }

        func sync(
            _ seq: Int, _ scope: Target.Scope, platform: String? = nil, hint: JSONValue? = nil, collapse: String? = nil,
            mandatory: Bool = false, expiresAt: Int? = nil, spreadMilliseconds: Int = 0
        ) -> Sync {
            Sync(
                seq: seq, target: Target(scope: scope, platform: platform), reason: "hotfix", scope: "bundle",
                hint: hint, collapse: collapse, mandatory: mandatory, createdAt: now - 10_000 + seq,
                expiresAt: expiresAt ?? now + 86_400_000, spreadMilliseconds: spreadMilliseconds,
                jitterMilliseconds: 4000)
        }

        mutating func append(_ sync: Sync) { view.apply(.syncAppended(sync), keepVersions: keepVersions) }

        /// Syncs 1…11 for the continuity tests; for u17 (cohort beta by its token, on ios) with
        /// last_sync 1 the answer is 2, 5 (standing for 4 and 5, mandatory) 7 and 9.
        mutating func appendContinuityLog() {
            append(sync(1, .user("u17")))
            append(sync(2, .user("u17")))
            append(sync(3, .user("u99")))
            append(sync(4, .all, collapse: "k", mandatory: true))
            append(sync(5, .all, collapse: "k"))
            append(sync(6, .user("u17"), expiresAt: now - 1))  // expired by the time of the hello
            append(sync(7, .cohort("beta")))
            append(sync(8, .all, platform: "android"))
            append(sync(9, .users(["u1", "u17"])))
            append(sync(10, .cohort("gamma")))
            append(sync(11, .user("u99"), collapse: "k"))
        }

        /// A running 50/50 experiment "layout" on screen "home" (control and compact retitle it).
        static func experiment(
            status: String = "running", traffic: Double = 1, sticky: Bool = false, overrides: [String: String] = [:],
            controlPatch: Bool = true, awayPatch: Bool = false
        ) throws -> Experiment {
            var home: JSONObject = ["compact": .object(["title": .string("Compact title")])]
            if controlPatch { home["control"] = .object(["title": .string("Control title")]) }
            var screens: JSONObject = ["home": .object(home)]
            if awayPatch { screens["away"] = .object(["compact": .object(["title": .string("Compact away")])]) }
            return try Experiment(
                key: "layout",
                json: .object([
                    "key": .string("layout"), "salt": .string("2019-02"), "status": .string(status),
                    "traffic": .number(traffic), "sticky": .bool(sticky),
                    "variants": .array([
                        .object(["key": .string("control"), "weight": .number(1)]),
                        .object(["key": .string("compact"), "weight": .number(1)]),
                    ]),
                    "overrides": .object(JSONObject(overrides.mapValues(JSONValue.string))),
                    "screens": .object(screens),
                ]))
        }

        mutating func setExperiments(_ experiments: [Experiment], generation: Int = 1) {
            let set = ExperimentSet(
                generation: generation, all: Dictionary(uniqueKeysWithValues: experiments.map { ($0.key, $0) }),
                changedAt: Dictionary(uniqueKeysWithValues: experiments.map { ($0.key, generation) }))
            view.apply(
                .experimentsChanged(set, screens: experiments.flatMap(\.screens.keys)), keepVersions: keepVersions)
        }

        /// A signed-in session (a token for `user`, else anonymous as "d-1").
        mutating func signIn(user: String? = nil, appVersion: String = "5.0.0") throws -> Session {
            var session = Session(helloDeadline: Driver.deadline, upgradeToken: nil)
            let steps = receive(
                &session, Driver.hello(token: user.map { Driver.token(user: $0) }, appVersion: appVersion))
            try #require(steps.first?.name == "signedIn")
            return session
        }

        /// What `target` sees of `version`, rendered apart from the cache the sessions use.
        static func rendered(_ version: ScreenVersion, for target: RenderTarget) -> RenderedTree {
            var cache = RenditionCache()
            return cache.rendered(version, for: target)
        }

        /// Applies a patch message's ops to `tree`.
        static func apply(_ patch: JSONValue, to tree: JSONValue) throws -> JSONValue {
            #expect(patch["type"] == .string("patch"))
            return try JSONPatch(json: try #require(patch["ops"])).apply(to: tree)
        }

        // Session inputs

        private mutating func record(_ actions: [Session.Action]) -> [Step] {
            lastActions = actions
            return actions.map(Step.init)
        }

        mutating func receive(_ session: inout Session, _ message: ClientMessage) -> [Step] {
            var out: [Session.Action] = []
            session.received(message, view: view, settings: settings, nowMilliseconds: now, cache: &cache, out: &out)
            return record(out)
        }

        mutating func receivedInvalid(_ session: Session, _ error: WireError) -> [Step] {
            var out: [Session.Action] = []
            session.receivedInvalid(error, out: &out)
            return record(out)
        }

        mutating func versionPublished(_ session: Session, _ version: ScreenVersion, congested: Bool = false) -> [Step]
        {
            var memo = FanoutMemo()
            return versionPublished(session, version, congested: congested, memo: &memo)
        }

        mutating func versionPublished(
            _ session: Session, _ version: ScreenVersion, congested: Bool = false, memo: inout FanoutMemo
        ) -> [Step] {
            var out: [Session.Action] = []
            var session = session
            session.versionPublished(
                version, view: view, isCongested: congested, nowMilliseconds: now, memo: &memo, cache: &cache,
                out: &out)
            return record(out)
        }

        mutating func screenMayHaveChanged(_ session: Session, screen: String, congested: Bool = false) -> [Step] {
            var out: [Session.Action] = []
            var session = session
            session.screenMayHaveChanged(
                screen: screen, view: view, isCongested: congested, nowMilliseconds: now, cache: &cache, out: &out)
            return record(out)
        }

        /// Deletes the screen from the view first, as the shard applies the change before telling sessions.
        mutating func screenDeleted(_ session: Session, _ screen: String) -> [Step] {
            view.apply(.screenDeleted(screen), keepVersions: keepVersions)
            var out: [Session.Action] = []
            var session = session
            session.screenDeleted(screen, out: &out)
            return record(out)
        }

        mutating func syncArrived(_ session: Session, _ sync: Sync, congested: Bool = false) -> [Step] {
            var out: [Session.Action] = []
            var session = session
            session.syncArrived(sync, isCongested: congested, out: &out)
            return record(out)
        }

        /// Publishes into the view first, as the shard applies the change before telling sessions.
        mutating func awaitedScreenPublished(_ session: Session, _ name: String, _ tree: JSONValue) -> [Step] {
            _ = publish(name, tree)
            var out: [Session.Action] = []
            var session = session
            session.awaitedScreenPublished(name, view: view, nowMilliseconds: now, cache: &cache, out: &out)
            return record(out)
        }

        mutating func drained(_ session: Session) -> [Step] {
            var out: [Session.Action] = []
            var session = session
            session.drained(view: view, nowMilliseconds: now, cache: &cache, out: &out)
            return record(out)
        }

        mutating func timerFired(_ session: inout Session, now: UInt64) -> [Step] {
            var out: [Session.Action] = []
            session.timerFired(now: now, out: &out)
            return record(out)
        }
    }
}
