import Testing
import WSProtocol

@testable import PushHub

/// `ScreenRoutes`' history: who published each version and why, and rollbacks (issue 26), on a
/// control plane without loops.
@Suite struct ScreenRoutesTests: AdminRequests {
    let plane = Self.makePlane()

    init() {
        addToken("ci", [.publish, .read])
        tick()
    }

    /// The answer's status and JSON body.
    func call(_ method: String, _ target: String, token: String = "secret-token", body: String = "") throws
        -> (Int, JSONValue)
    {
        let response = try #require(
            answer(request(method, target, token: token), body: body), "\(method) \(target) answered")
        return (response.status, try JSONReader.parse(response.body))
    }

    func publish(_ n: Int, query: String = "", token: String = "secret-token") throws -> JSONValue {
        let (status, answer) = try call("PUT", "/v1/screens/home" + query, token: token, body: #"{"n":\#(n)}"#)
        #expect(status == 200, "publish: \(answer)")
        return answer
    }

    func history() throws -> [JSONValue] {
        let (status, answer) = try call("GET", "/v1/screens/home/history")
        #expect(status == 200)
        return try #require(answer["versions"]?.arrayValue)
    }

    @Test("history names each version's token (root for the root token) and message, null where none")
    func authorAndMessage() throws {
        _ = try publish(1, query: "?message=first%20cut", token: "s-ci")
        _ = try publish(2)
        let entries = try history()
        #expect(entries.map { $0["version"] } == [.number(2), .number(1)])
        #expect(entries.map { $0["author"] } == [.string("root"), .string("ci")])
        #expect(entries.map { $0["message"] } == [.null, .string("first cut")])
        #expect(entries.map { $0["rollback_of"] } == [.null, .null])
    }

    @Test("a message of 500 characters is taken, 501 is a 400 saying the limit; a control character is refused")
    func messageLimits() throws {
        let five = String(repeating: "é", count: 500)  // characters, not bytes (1,000 in UTF-8)
        let encoded = String(repeating: "%C3%A9", count: 500)
        _ = try publish(1, query: "?message=" + encoded)
        #expect(try history().first?["message"] == .string(five))
        let (status, answer) = try call("PUT", "/v1/screens/home?message=" + encoded + "x", body: #"{"n":2}"#)
        #expect(status == 400)
        #expect(answer["error"]?["code"] == .string("bad_message"))
        #expect(answer["error"]?["message"]?.stringValue?.contains("501 characters") == true)
        #expect(answer["error"]?["message"]?.stringValue?.contains("at most 500") == true)
        let (lineStatus, line) = try call("PUT", "/v1/screens/home?message=a%0Ab", body: #"{"n":2}"#)
        #expect(lineStatus == 400 && line["error"]?["message"]?.stringValue?.contains("U+000A") == true)
        // A dry run checks it too, and the refusals published nothing.
        #expect(try call("PUT", "/v1/screens/home?dry_run=true&message=" + encoded + "x", body: "{}").0 == 400)
        #expect(try history().count == 1)
    }

    @Test("a rollback is a new version marked rollback_of, by its token, with its message")
    func rollbackMarked() throws {
        for n in 1...3 { _ = try publish(n) }
        let (status, answer) = try call(
            "POST", "/v1/screens/home/rollback", token: "s-ci", body: #"{"to":1,"message":"v3 broke checkout"}"#)
        #expect(status == 200 && answer["version"] == .number(4) && answer["unchanged"] == nil)
        let newest = try #require(try history().first)
        #expect(newest["version"] == .number(4))
        #expect(newest["rollback_of"] == .number(1))
        #expect(newest["author"] == .string("ci"))
        #expect(newest["message"] == .string("v3 broke checkout"))
        #expect(try call("GET", "/v1/screens/home").1["tree"] == .object(["n": .number(1)]))
    }

    @Test("a rollback to the current version, or to a version with the same tree, makes no version: 200 unchanged")
    func rollbackToTheSameTree() throws {
        _ = try publish(1)
        _ = try publish(2)
        _ = try publish(1)  // v3 has v1's tree
        for body in [#"{"to":3}"#, #"{"to":1,"message":"again"}"#] {
            let (status, answer) = try call("POST", "/v1/screens/home/rollback", body: body)
            #expect(status == 200)
            #expect(
                answer
                    == .object([
                        "name": .string("home"), "version": .number(3), "unchanged": .bool(true), "sent": .number(0),
                    ]))
        }
        #expect(try history().count == 3)
        // To a different tree it still publishes.
        #expect(try call("POST", "/v1/screens/home/rollback", body: #"{"to":2}"#).1["version"] == .number(4))
    }

    @Test("a rollback body is strict: an unknown field, a message that is not a string or too long is a 400")
    func rollbackBodyRefusals() throws {
        _ = try publish(1)
        _ = try publish(2)
        let cases: [(String, String)] = [
            (#"{"to":1,"mesage":"x"}"#, "unknown_field"),
            (#"{"to":1,"message":5}"#, "bad_message"),
            (#"{"to":1,"message":"\#(String(repeating: "x", count: 501))"}"#, "bad_message"),
            ("[1]", "bad_request"),
        ]
        for (body, code) in cases {
            let (status, answer) = try call("POST", "/v1/screens/home/rollback", body: body)
            #expect(status == 400 && answer["error"]?["code"] == .string(code), "\(body): \(answer)")
        }
        #expect(try history().count == 2)
    }
}
