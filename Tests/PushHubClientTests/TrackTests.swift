import ScreenTree
import Testing

@testable import PushHubClient

/// What `track` accepts: the hub's rule (docs/protocol.md), checked before anything is sent.
@Suite struct TrackTests {
    @Test(
        "event names of 1 to 64 characters of A-Z a-z 0-9 _ . : - are accepted",
        arguments: ["a", "purchase", "checkout.done", "cart:add-item_2", "A-Z.09:_", String(repeating: "x", count: 64)])
    func accepted(_ event: String) throws {
        let track = try Track(event: event, value: nil)
        #expect(JSONWriter.string(.object(track.message)) == #"{"event":"\#(event)","type":"track"}"#)
    }

    @Test("a value goes out as a JSON number; none leaves the member out")
    func values() throws {
        #expect(
            JSONWriter.string(.object(try Track(event: "purchase", value: 12.5).message))
                == #"{"event":"purchase","type":"track","value":12.5}"#)
        #expect(
            JSONWriter.string(.object(try Track(event: "p", value: -0.25).message))
                == #"{"event":"p","type":"track","value":-0.25}"#)
        #expect(
            JSONWriter.string(.object(try Track(event: "p", value: 0).message))
                == #"{"event":"p","type":"track","value":0}"#)
        #expect(try Track(event: "p", value: nil).message["value"] == nil)
    }

    @Test(
        "a bad event name is refused as the hub refuses it (bad_track, ref track), saying what is wrong",
        arguments: [
            ("", "the event name is empty"),
            (String(repeating: "x", count: 65), "is 65 characters long"),
            ("add to cart", #"has " " at offset 3"#),
            ("café", #"has "é" at offset 3"#),
            ("a/b", #"has "/" at offset 1"#),
            ("e+1", #"has "+" at offset 1"#),
        ])
    func refusedNames(_ event: String, _ says: String) {
        #expect {
            try Track(event: event, value: nil)
        } throws: { error in
            guard let error = error as? HubError else { return false }
            return error.code == "bad_track" && error.ref == "track" && error.message.contains(says)
                && error.message.contains("1 to 64 characters of A-Z a-z 0-9 _ . : -")
        }
    }

    @Test("a value that is not a finite number is refused", arguments: [Double.nan, .infinity, -.infinity])
    func refusedValues(_ value: Double) {
        #expect {
            try Track(event: "purchase", value: value)
        } throws: { error in
            (error as? HubError)?.code == "bad_track" && (error as? HubError)?.message.contains("finite number") == true
        }
    }
}
