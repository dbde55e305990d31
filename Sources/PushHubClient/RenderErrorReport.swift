import Foundation
import ScreenTree

/// An error that names the component of the screen tree it failed in, for the `render_error`
/// the client sends (DESIGN §15): a release's health counts errors per component. Throw one from
/// a tree callback, or pass one to `renderFailed`; any other error is reported without a component.
///
/// ```swift
/// struct MissingImage: RenderErrorDescribing, CustomStringConvertible {
///     var component: String? { "Carousel" }
///     var description: String { "slide 2 has no image" }
/// }
/// ```
public protocol RenderErrorDescribing: Error {
    /// The component that could not be drawn ("Carousel"), or nil when unknown. Longer than 200
    /// characters, it is cut to 200.
    var component: String? { get }
}

/// What a `render_error` says about an error (DESIGN §15, docs/protocol.md): the component
/// (`RenderErrorDescribing.component`, else none) and the message (`LocalizedError`'s
/// `errorDescription` when it has one, else `String(describing:)`). The JavaScript twin is
/// clients/js/src/render-error.js.
///
/// Invariant: `component` has at most `maxComponentLength` and `message` at most
/// `maxMessageLength` Unicode scalars — what the hub accepts, however it counts characters
/// (scalars or grapheme clusters): longer text is cut, never refused.
struct RenderErrorReport: Sendable {
    static let maxMessageLength = 1000
    static let maxComponentLength = 200

    let component: String?
    let message: String

    /// The report of `error`, made on the caller's thread (an `Error` need not be `Sendable`).
    init(_ error: any Error) {
        component = (error as? any RenderErrorDescribing)?.component.map { Self.cut($0, to: Self.maxComponentLength) }
        let text = (error as? any LocalizedError)?.errorDescription ?? String(describing: error)
        message = Self.cut(text, to: Self.maxMessageLength)
    }

    /// `{"type":"render_error","screen":…,"version":…,"hash":…,"component":…,"message":…}`;
    /// `hash` and `component` only when known.
    func message(screen: String, version: Int, hash: String?) -> JSONObject {
        var message: JSONObject = [
            "type": .string("render_error"), "screen": .string(screen), "version": .number(Double(version)),
            "message": .string(self.message),
        ]
        if let hash { message["hash"] = .string(hash) }
        if let component { message["component"] = .string(component) }
        return message
    }

    /// `text`'s first `limit` Unicode scalars.
    static func cut(_ text: String, to limit: Int) -> String {
        let scalars = text.unicodeScalars
        guard let end = scalars.index(scalars.startIndex, offsetBy: limit, limitedBy: scalars.endIndex) else {
            return text
        }
        return String(scalars[..<end])
    }
}
