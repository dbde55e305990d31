/// A dotted-quad IPv4 address in its one canonical text form (RFC 3986 §3.2.2 `IPv4address`):
/// four decimal numbers 0–255, no leading zero (`010` is octal to `inet_aton`, so a URL holding
/// it would not mean what it says).
struct IPv4Address: Equatable {
    var octets: (UInt8, UInt8, UInt8, UInt8)

    init?(_ text: ArraySlice<UInt8>) {
        let parts = text.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count == 4 else { return nil }
        var values: [UInt8] = []
        for part in parts {
            guard (1...3).contains(part.count), part.allSatisfy(HTTPURL.isDigit),
                part.count == 1 || part.first != UInt8(ascii: "0"),
                let value = UInt8(String(decoding: part, as: UTF8.self))
            else { return nil }
            values.append(value)
        }
        octets = (values[0], values[1], values[2], values[3])
    }

    static func == (a: IPv4Address, b: IPv4Address) -> Bool { a.octets == b.octets }
}

/// An IPv6 address in RFC 4291 §2.2 text form (without brackets): eight groups of one to four
/// hex digits, one `::` standing for one or more zero groups, the last 32 bits possibly a
/// dotted quad. No zone (`%eth0`): a URL cannot carry one usefully.
struct IPv6Address: Equatable {
    /// The 16 octets, network order.
    var octets: [UInt8]

    static let loopback: [UInt8] = Array(repeating: 0, count: 15) + [1]

    init?(_ text: some Collection<UInt8>) {
        let text = Array(text)
        guard !text.isEmpty, text.count <= 45 else { return nil }
        let gaps = text.ranges(of: [UInt8(ascii: ":"), UInt8(ascii: ":")])
        guard gaps.count <= 1, text.firstRange(of: Array(":::".utf8)) == nil else { return nil }
        let left = gaps.first.map { text[..<$0.lowerBound] } ?? text[...]
        let right = gaps.first.map { text[$0.upperBound...] } ?? []
        guard let head = Self.groups(left, mayEndInIPv4: gaps.isEmpty),
            let tail = Self.groups(right, mayEndInIPv4: true)
        else { return nil }
        if gaps.isEmpty {
            guard head.count == 16 else { return nil }
            octets = head
        } else {
            guard head.count + tail.count <= 14 else { return nil }
            octets = head + Array(repeating: 0, count: 16 - head.count - tail.count) + tail
        }
    }

    /// The octets of `h16 *(":" h16)` (empty text: none), the last group possibly a dotted quad.
    private static func groups(_ text: ArraySlice<UInt8>, mayEndInIPv4: Bool) -> [UInt8]? {
        guard !text.isEmpty else { return [] }
        let groups = text.split(separator: UInt8(ascii: ":"), omittingEmptySubsequences: false)
        var octets: [UInt8] = []
        for (position, group) in groups.enumerated() {
            if mayEndInIPv4, position == groups.count - 1, group.contains(UInt8(ascii: ".")) {
                guard let v4 = IPv4Address(group) else { return nil }
                octets += [v4.octets.0, v4.octets.1, v4.octets.2, v4.octets.3]
                continue
            }
            guard (1...4).contains(group.count), group.allSatisfy(HTTPURL.isHexDigit),
                let value = UInt16(String(decoding: group, as: UTF8.self), radix: 16)
            else { return nil }
            octets += [UInt8(value >> 8), UInt8(value & 0xFF)]
        }
        return octets
    }
}
