// A stand-in for Apple's CryptoKit with the signatures the client uses, so that
// scripts/check-client-portability.py can type-check the client's Apple branch on Linux. It is
// never run: the bodies only satisfy the compiler.
import Foundation

public struct SHA256Digest: Sequence, Sendable {
    public func makeIterator() -> Array<UInt8>.Iterator { fatalError("a stand-in for type-checking") }
}

public enum SHA256 {
    public static func hash<D: DataProtocol>(data: D) -> SHA256Digest { fatalError("a stand-in for type-checking") }
}
