/// One element of a `Sec-WebSocket-Extensions` header (RFC 6455 §9.1): an extension name and its
/// parameters, as offered by a client or answered by a server.
///
/// ```
/// Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits, permessage-deflate
/// ```
/// is two offers of `permessage-deflate`, the first with one parameter without a value.
/// Invariant: names are lowercased tokens; a value is unquoted (a quoted-string's quotes and
/// escapes removed).
public struct ExtensionOffer: Equatable, Sendable {
    public var name: String
    public var parameters: [(name: String, value: String?)]

    public init(name: String, parameters: [(name: String, value: String?)] = []) {
        self.name = name
        self.parameters = parameters
    }

    public static func == (a: ExtensionOffer, b: ExtensionOffer) -> Bool {
        a.name == b.name && a.parameters.map(\.name) == b.parameters.map(\.name)
            && a.parameters.map(\.value) == b.parameters.map(\.value)
    }

    /// Every offer in the headers' `Sec-WebSocket-Extensions` fields, in order; nil when a field
    /// does not parse (the header is then ignored as a whole: no extension is agreed).
    public static func parse(_ headers: HeaderFields) -> [ExtensionOffer]? {
        var offers: [ExtensionOffer] = []
        for field in headers where field.name.caseInsensitiveEquals("Sec-WebSocket-Extensions") {
            guard let parsed = parse(field.value) else { return nil }
            offers += parsed
        }
        return offers
    }

    /// The offers in one header value (RFC 6455 §9.1's grammar: comma-separated extensions,
    /// semicolon-separated parameters, values as tokens or quoted strings).
    static func parse(_ value: String) -> [ExtensionOffer]? {
        var scanner = Scanner(Array(value.utf8))
        var offers: [ExtensionOffer] = []
        while true {
            scanner.skipSpace()
            if scanner.atEnd { return offers }
            if scanner.take(UInt8(ascii: ",")) { continue }  // empty list elements are allowed
            guard let name = scanner.token() else { return nil }
            var offer = ExtensionOffer(name: name.lowercased())
            scanner.skipSpace()
            while scanner.take(UInt8(ascii: ";")) {
                scanner.skipSpace()
                guard let parameter = scanner.token() else { return nil }
                scanner.skipSpace()
                var parameterValue: String?
                if scanner.take(UInt8(ascii: "=")) {
                    scanner.skipSpace()
                    guard let parsed = scanner.quotedString() ?? scanner.token() else { return nil }
                    parameterValue = parsed
                    scanner.skipSpace()
                }
                offer.parameters.append((parameter.lowercased(), parameterValue))
            }
            offers.append(offer)
            scanner.skipSpace()
            if scanner.atEnd { return offers }
            guard scanner.take(UInt8(ascii: ",")) else { return nil }
        }
    }

    /// The header value form: `name; param; param=value`.
    public var headerValue: String {
        ([name] + parameters.map { parameter in parameter.value.map { "\(parameter.name)=\($0)" } ?? parameter.name })
            .joined(separator: "; ")
    }

    private struct Scanner {
        let bytes: [UInt8]
        var index = 0

        init(_ bytes: [UInt8]) { self.bytes = bytes }

        var atEnd: Bool { index >= bytes.count }

        mutating func skipSpace() {
            while index < bytes.count, bytes[index] == 0x20 || bytes[index] == 0x09 { index += 1 }
        }

        mutating func take(_ byte: UInt8) -> Bool {
            guard index < bytes.count, bytes[index] == byte else { return false }
            index += 1
            return true
        }

        /// An RFC 9110 token.
        mutating func token() -> String? {
            let start = index
            while index < bytes.count, HTTPToken.isTokenByte(bytes[index]) { index += 1 }
            return index > start ? String(decoding: bytes[start..<index], as: UTF8.self) : nil
        }

        /// A quoted string's content (escapes resolved); nil when there is none here.
        mutating func quotedString() -> String? {
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { return nil }
            var content: [UInt8] = []
            var i = index + 1
            while i < bytes.count {
                switch bytes[i] {
                case UInt8(ascii: "\""):
                    index = i + 1
                    return String(decoding: content, as: UTF8.self)
                case UInt8(ascii: "\\") where i + 1 < bytes.count:
                    content.append(bytes[i + 1])
                    i += 2
                default:
                    content.append(bytes[i])
                    i += 1
                }
            }
            return nil  // unterminated
        }
    }
}
