import Foundation
import Portable
import Testing

/// `Base64` (Portable) replaced Foundation's base64 in the hub; Foundation is the reference here.
@Suite struct Base64Tests {
    @Test("standard: every length 0...64 of random bytes encodes as Foundation does and decodes back")
    func standardMatchesFoundation() {
        var rng = SystemRandomNumberGenerator()
        for length in 0...64 {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &rng) }
            let encoded = Base64.standard.encode(bytes)
            #expect(encoded == Data(bytes).base64EncodedString(), "\(bytes)")
            #expect(Base64.standard.decode(encoded) == bytes)
            let url = Base64.url.encode(bytes)
            #expect(url == encoded.replacing("+", with: "-").replacing("/", with: "_").replacing("=", with: ""))
            #expect(Base64.url.decode(url) == bytes)
        }
    }

    @Test("RFC 4648 §10 vectors; what is not base64 of its kind is refused")
    func vectorsAndRefusals() {
        let vectors = [
            "": "", "f": "Zg==", "fo": "Zm8=", "foo": "Zm9v", "foob": "Zm9vYg==", "fooba": "Zm9vYmE=",
            "foobar": "Zm9vYmFy",
        ]
        for (plain, encoded) in vectors {
            #expect(Base64.standard.encode(Array(plain.utf8)) == encoded)
            #expect(Base64.standard.decode(encoded) == Array(plain.utf8))
        }
        for bad in ["Zg", "Zg=", "Z===", "Zm9v!", "Zm-v", "Zg==Zg==", "=Zg=", "Zm9vYg=a"] {
            #expect(Base64.standard.decode(bad) == nil, "\(bad)")
        }
        for bad in ["Zg==", "Zm9v+", "a", "Zm9vY"] {
            #expect(Base64.url.decode(bad) == nil, "\(bad)")
        }
    }
}
