// TEMPORARY (helper creds): the contract's HTTP2 module types, until h-h2/h-hpack land; this file
// is deleted when they are merged.
public struct HeaderField: Equatable, Sendable {
    public var name: String
    public var value: String
    public init(_ name: String, _ value: String) {
        self.name = name
        self.value = value
    }
}

public struct HTTP2Request: Equatable, Sendable {
    public var method: String
    public var scheme: String
    public var authority: String
    public var path: String
    public var headers: [HeaderField]
    public var body: [UInt8]
    public init(method: String, scheme: String, authority: String, path: String, headers: [HeaderField], body: [UInt8])
    {
        (self.method, self.scheme, self.authority, self.path, self.headers, self.body) =
            (method, scheme, authority, path, headers, body)
    }
}

public struct HTTP2Response: Equatable, Sendable {
    public var status: Int
    public var headers: [HeaderField]
    public var body: [UInt8]
    public init(status: Int, headers: [HeaderField], body: [UInt8]) {
        (self.status, self.headers, self.body) = (status, headers, body)
    }
}
