import Testing

@testable import PushHub

/// A hello whose token names a kid no key has, on a hub that fetches a JWKS (DESIGN §18): the
/// session waits for the fetch (`awaitingKey`), holds what the client sends meanwhile, and is
/// verified once more when the loop hears the fetch ended — without a socket or a clock.
@Suite("Parked hellos: a token naming an unknown kid waits for the JWKS fetch, then signs in or is refused")
struct JWKSParkedHelloTests {
    typealias Driver = SessionTests.Driver
    typealias Step = SessionTests.Step

    /// A driver whose verifier has the HS256 secret and the JWKS key `rsa`, fetching a JWKS.
    static func driver(fetchesKeys: Bool = true) throws -> (Driver, JWTKeyStore) {
        let store = JWTKeyStore(
            JWTKeySet(configured: [JWTKey(secret: Driver.secret)], published: [try key("rsa")]),
            fetchesKeys: fetchesKeys)
        var driver = Driver(allowAnonymous: false)
        driver.settings.tokens = JWTVerifier(keys: store)
        return (driver, store)
    }

    static func key(_ name: String) throws -> JWTKey {
        guard case .key(let key) = JWK.read(.object(try JWTTestKeys.shared().jwks[name]!), origin: "the test JWKS")
        else {
            throw SelfCheckFailure(description: "the JWK \(name) was not read")
        }
        return key
    }

    /// A token for `user` signed by the JWKS key `name` (not published yet, for p256), naming it.
    static func token(user: String = "u17", signedBy name: String = "p256") throws -> String {
        try JWTTestKeys.shared().token(
            ["sub": .string(user), "exp": .number(Double(Driver.nowSeconds + 3600))],
            alg: name == "p256" ? .es256 : .rs256, key: name, kid: name)
    }

    static func keysRefreshed(_ driver: inout Driver, _ session: inout Session) -> [Step] {
        var out: [Session.Action] = []
        session.keysRefreshed(
            view: driver.view, settings: driver.settings, nowMilliseconds: driver.now, cache: &driver.cache, out: &out)
        return out.map(Step.init)
    }

    @Test("the hello parks, the loop is asked for the kid, and what the client sends meanwhile is held")
    func parks() throws {
        var (driver, _) = try Self.driver()
        var session = Session(helloDeadline: Driver.deadline, upgradeToken: nil)
        let steps = driver.receive(&session, Driver.hello(token: try Self.token()))
        #expect(steps == [.awaitsKey("p256")])
        #expect(SessionTests.StateKind(session) == .awaitingKey(kid: "p256", held: 0))
        #expect(session.helloDeadline == Driver.deadline && session.ready == nil)
        #expect(driver.receive(&session, .subscribe(screen: "home", have: nil)).isEmpty)
        #expect(driver.receive(&session, .ack(sync: "s-1")).isEmpty)
        #expect(SessionTests.StateKind(session) == .awaitingKey(kid: "p256", held: 2))
    }

    @Test("once the fetch brought the key, the hello signs in and what was held is served in order")
    func signsInAfterFetch() throws {
        var (driver, store) = try Self.driver()
        _ = driver.publish("home", .object(["type": .string("screen")]))
        var session = Session(helloDeadline: Driver.deadline, upgradeToken: nil)
        _ = driver.receive(&session, Driver.hello(token: try Self.token()))
        _ = driver.receive(&session, .subscribe(screen: "home", have: nil))
        _ = driver.receive(&session, .unsubscribe(screen: "home"))
        store.publish([try Self.key("rsa"), try Self.key("p256")])
        let steps = Self.keysRefreshed(&driver, &session)
        #expect(steps.map(\.name) == ["signedIn", "welcome", "snapshot", "subscribed", "unsubscribed"])
        #expect(session.ready?.attributes.user == "u17")
        // Another refresh changes nothing for a signed-in session.
        #expect(Self.keysRefreshed(&driver, &session).isEmpty)
    }

    @Test("if the fetch did not bring the key, the hello is refused naming the kid, and parks no second time")
    func refusedAfterFetch() throws {
        var (driver, _) = try Self.driver()
        var session = Session(helloDeadline: Driver.deadline, upgradeToken: nil)
        _ = driver.receive(&session, Driver.hello(token: try Self.token()))
        _ = driver.receive(&session, .subscribe(screen: "home", have: nil))
        let steps = Self.keysRefreshed(&driver, &session)
        #expect(steps.map(\.name) == ["error:unauthorized", "close"])
        #expect(steps.first?.json?["message"] == .string("no key with kid \"p256\" is known to this hub"))
        #expect(steps.last == .close(.policyViolation, reason: "unauthorized"))
        #expect(SessionTests.StateKind(session) == .closed)
    }

    @Test("the hello timeout still applies while parked: refused naming the kid")
    func timeout() throws {
        var (driver, _) = try Self.driver()
        var session = Session(helloDeadline: Driver.deadline, upgradeToken: nil)
        _ = driver.receive(&session, Driver.hello(token: try Self.token()))
        #expect(driver.timerFired(&session, now: Driver.deadline - 1).isEmpty)
        let steps = driver.timerFired(&session, now: Driver.deadline)
        #expect(steps.map(\.name) == ["error:unauthorized", "close"])
        #expect(steps.first?.json?["message"] == .string("no key with kid \"p256\" is known to this hub"))
        #expect(SessionTests.StateKind(session) == .closed)
    }

    @Test("without a JWKS an unknown kid is refused at once; a known kid and HS256 tokens never park")
    func noParking() throws {
        var (plain, _) = try Self.driver(fetchesKeys: false)
        var session = Session(helloDeadline: Driver.deadline, upgradeToken: nil)
        #expect(
            plain.receive(&session, Driver.hello(token: try Self.token())).map(\.name) == [
                "error:unauthorized", "close",
            ])
        var (driver, _) = try Self.driver()
        var known = Session(helloDeadline: Driver.deadline, upgradeToken: nil)
        #expect(
            driver.receive(&known, Driver.hello(token: try Self.token(signedBy: "rsa"))).map(\.name) == [
                "signedIn", "welcome",
            ])
        let hs256 = try JWTTestKeys.shared().token(
            ["sub": .string("u1")], header: ["alg": .string("HS256"), "kid": .string("nope")], signingAs: .hs256,
            secret: Array("not the secret".utf8))
        var forged = Session(helloDeadline: Driver.deadline, upgradeToken: nil)
        let steps = driver.receive(&forged, Driver.hello(token: hs256))
        #expect(steps.map(\.name) == ["error:unauthorized", "close"])
        #expect(steps.first?.json?["message"] == .string(JWTError.badSignature.description))
    }

    @Test("a client that sends more than 32 messages before its welcome is refused")
    func heldMessagesBounded() throws {
        var (driver, _) = try Self.driver()
        var session = Session(helloDeadline: Driver.deadline, upgradeToken: nil)
        _ = driver.receive(&session, Driver.hello(token: try Self.token()))
        for index in 0..<Session.maxHeldMessages {
            #expect(driver.receive(&session, .ack(sync: "s-\(index)")).isEmpty)
        }
        let steps = driver.receive(&session, .ack(sync: "s-x"))
        #expect(steps.map(\.name) == ["error:bad_message", "close"])
        #expect(SessionTests.StateKind(session) == .closed)
    }
}
