import Foundation
import Testing

@testable import PushHubClient

/// What a `render_error` says about an error: its component and message, cut to the hub's limits.
@Suite struct RenderErrorReportTests {
    struct Named: RenderErrorDescribing, CustomStringConvertible {
        var component: String?
        var description: String
    }

    enum Localized: LocalizedError {
        case missingImage
        var errorDescription: String? { "the image is missing" }
    }

    enum Plain: Error { case brokenLayout }

    @Test("the component comes from RenderErrorDescribing; the message from LocalizedError, else String(describing:)")
    func describes() {
        let named = RenderErrorReport(Named(component: "Carousel", description: "no slides"))
        #expect(named.component == "Carousel" && named.message == "no slides")
        #expect(RenderErrorReport(Named(component: nil, description: "x")).component == nil)
        let localized = RenderErrorReport(Localized.missingImage)
        #expect(localized.component == nil && localized.message == "the image is missing")
        let plain = RenderErrorReport(Plain.brokenLayout)
        #expect(plain.component == nil && plain.message == "brokenLayout")
    }

    @Test("a message is cut to 1000 Unicode scalars and a component to 200, never inside a scalar")
    func cuts() {
        #expect(
            RenderErrorReport(Named(component: nil, description: String(repeating: "m", count: 1000))).message.count
                == 1000)
        let long = RenderErrorReport(
            Named(component: String(repeating: "C", count: 300), description: String(repeating: "m", count: 5000)))
        #expect(long.message == String(repeating: "m", count: 1000))
        #expect(long.component == String(repeating: "C", count: 200))
        // 999 letters, then emoji (one scalar, four UTF-8 bytes each) and a combining accent.
        let astral = RenderErrorReport(
            Named(component: nil, description: String(repeating: "a", count: 999) + "😀\u{301}😀😀"))
        #expect(astral.message == String(repeating: "a", count: 999) + "😀")
        #expect(astral.message.unicodeScalars.count == 1000)
    }

    @Test("the message has hash and component only when known")
    func message() {
        let report = RenderErrorReport(Named(component: nil, description: "boom"))
        #expect(
            JSONWriter.string(.object(report.message(screen: "home", version: 4, hash: nil)))
                == #"{"message":"boom","screen":"home","type":"render_error","version":4}"#)
        let named = RenderErrorReport(Named(component: "Carousel", description: "boom"))
        #expect(
            JSONWriter.string(.object(named.message(screen: "home", version: 4, hash: "h")))
                == #"{"component":"Carousel","hash":"h","message":"boom","screen":"home","type":"render_error","version":4}"#
        )
    }
}
