import Testing

@testable import ScreenTree

@Suite struct JSONTests {
    @Test("RFC 8785 Appendix B number formatting")
    func numbers() throws {
        let cases: [(String, String)] = [
            ("0", "0"), ("-0", "0"), ("1", "1"), ("4.50", "4.5"), ("2e-3", "0.002"), ("1E30", "1e+30"),
            ("333333333.33333329", "333333333.3333333"), ("0.000000000000000000000000001", "1e-27"),
            ("1e21", "1e+21"), ("1e20", "100000000000000000000"), ("123456789012345680000", "123456789012345680000"),
            ("0.000001", "0.000001"), ("0.0000001", "1e-7"), ("-1.5e-7", "-1.5e-7"),
            ("9007199254740993", "9007199254740992"),
            ("5e-324", "5e-324"), ("1.7976931348623157e308", "1.7976931348623157e+308"),
            ("295147905179352830000", "295147905179352830000"),
        ]
        for (input, expected) in cases {
            let value = try JSONReader.parse(input)
            #expect(JSONWriter.string(value) == expected, "\(input)")
        }
    }

    @Test("canonical form: keys sorted by UTF-16 code units, minimal escapes")
    func canonical() throws {
        let value = try JSONReader.parse(
            #"{"b":1,"a":[true,null,"x\"\\\/\u0001\n"],"\u20ac":2,"\ud83d\ude00":3,"\u00e9":4}"#)
        #expect(
            JSONWriter.string(value) == "{\"a\":[true,null,\"x\\\"\\\\/\\u0001\\n\"],\"b\":1,\"é\":4,\"€\":2,\"😀\":3}")
    }

    @Test("round trip: parse(write(v)) == v")
    func roundTrip() throws {
        let text = #"{"type":"screen","children":[{"id":"a","n":-12.5e3,"s":"κόσμε"},[],{},""],"ok":false}"#
        let value = try JSONReader.parse(text)
        #expect(try JSONReader.parse(JSONWriter.write(value)) == value)
    }

    @Test("strict parsing: each refusal names the byte offset")
    func refusals() {
        let cases: [(String, Int)] = [
            ("", 0), ("{", 1), ("[1,]", 3), ("{\"a\":1,}", 7), ("01", 1), ("1.", 2), ("-", 1), ("NaN", 0), ("[1 2]", 3),
            ("\"\u{01}\"", 1), ("\"\\x\"", 2), ("{\"a\":1,\"a\":2}", 7), ("\"\\ud800\"", 7), ("true false", 5),
            ("1e400", 0),
        ]
        for (text, offset) in cases {
            #expect(throws: JSONError.self, "\(text)") { try JSONReader.parse(text) }
            do {
                _ = try JSONReader.parse(text)
            } catch {
                #expect(error.offset == offset, "\(text): \(error)")
            }
        }
        #expect(throws: JSONError.self) { try JSONReader.parse([0x22, 0xFF, 0x22]) }
        let tooLong = Array("[1,2,3]".utf8)
        #expect(throws: JSONError(offset: 4, message: "the text is 7 bytes; at most 4 are accepted")) {
            try tooLong.withUnsafeBytes { raw in
                Result { () throws(JSONError) in try JSONReader.parse(raw, maxBytes: 4) }
            }.get()
        }
        let deep = String(repeating: "[", count: 300) + String(repeating: "]", count: 300)
        #expect(throws: JSONError.self) { try JSONReader.parse(deep) }
    }

    @Test("strings and names compare code point by code point (RFC 8259 §8.3): é and e + U+0301 differ")
    func normalizationIsNotEquality() throws {
        #expect(try JSONReader.parse(#""\u00e9""#) != JSONReader.parse(#""e\u0301""#))
        // In either order the two names are two members, each found by its own spelling.
        for text in [#"{"\u00e9":1,"e\u0301":2}"#, #"{"e\u0301":2,"\u00e9":1}"#] {
            let object = try #require(try JSONReader.parse(text).objectValue, "\(text)")
            #expect(object.count == 2 && object["\u{E9}"] == .number(1) && object["e\u{301}"] == .number(2), "\(text)")
        }
    }

    @Test("screen hash is SHA-256 of the canonical form")
    func hash() throws {
        // sha256("{}") computed independently.
        #expect(
            ScreenHash.of(try JSONReader.parse("{ }"))
                == "44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a")
    }

    @Test("JSON Pointer escapes ~ and /")
    func pointer() {
        let pointer = JSONPointer(["a/b", "m~n", "0"])
        #expect(pointer.description == "/a~1b/m~0n/0")
        #expect(JSONPointer(parsing: pointer.description) == pointer)
        #expect(JSONPointer(parsing: "a") == nil)
        #expect(JSONPointer(parsing: "/~2") == nil)
    }

    @Test("JSON Pointer is read code point by code point: a combining mark does not hide a / or a ~")
    func pointerScalars() {
        // "/" + U+0301 is one Character: split on Characters, this was the one token "a/\u{301}b".
        #expect(JSONPointer(parsing: "/a/\u{301}b")?.tokens == ["a", "\u{301}b"])
        // "~" + U+0301 is not an escape (RFC 6901: ~ is followed by 0 or 1).
        #expect(JSONPointer(parsing: "/a~\u{301}") == nil)
        let pointer = JSONPointer(["\u{301}/x", "~\u{301}", ""])
        #expect(pointer.description == "/\u{301}~1x/~0\u{301}/")
        #expect(JSONPointer(parsing: pointer.description) == pointer)
        // Tokens compare scalar by scalar too: é and e + U+0301 are two keys.
        #expect(JSONPointer(parsing: "/\u{e9}") != JSONPointer(parsing: "/e\u{301}"))
    }
}
