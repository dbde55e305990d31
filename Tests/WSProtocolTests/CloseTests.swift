import Testing

@testable import WSProtocol

@Suite struct CloseTests {
    @Test("valid wire codes: defined, registered and application ranges only")
    func wireCodes() {
        let valid: [UInt16] = [
            1000, 1001, 1002, 1003, 1007, 1008, 1009, 1010, 1011, 1012, 1013, 1014, 3000, 3999, 4000, 4999,
        ]
        let invalid: [UInt16] = [0, 999, 1004, 1005, 1006, 1015, 1016, 1100, 2000, 2999, 5000, 65535]
        #expect(valid.allSatisfy { CloseCode($0).isValidOnWire })
        #expect(invalid.allSatisfy { !CloseCode($0).isValidOnWire })
    }

    @Test("an encoded reason is cut to 123 bytes at a character boundary")
    func reasonTruncation() {
        let payload = ClosePayload(code: .goingAway, reason: String(repeating: "é", count: 100))  // 200 bytes
        let encoded = payload.encoded
        #expect(encoded.count == 2 + 122)  // 61 two-byte characters fit in 123
        #expect(encoded.prefix(2) == [0x03, 0xE9])
        #expect(String(validating: encoded.dropFirst(2), as: UTF8.self) != nil)
    }

    @Test("the peer's close is echoed with its code, then shutdown; ours waits for the answer")
    func handshakeStates() {
        var peerFirst = CloseHandshake()
        #expect(
            peerFirst.peerSentClose(ClosePayload(code: CloseCode(4000)))
                == .sendCloseAndShutdown(ClosePayload(code: CloseCode(4000))))
        #expect(peerFirst.state == .closed)
        #expect(peerFirst.localClose(ClosePayload(code: .goingAway), deadline: 5) == .none)

        var noCode = CloseHandshake()
        #expect(noCode.peerSentClose(ClosePayload(code: nil)) == .sendCloseAndShutdown(ClosePayload(code: .normal)))

        var ourFirst = CloseHandshake()
        #expect(
            ourFirst.localClose(ClosePayload(code: .goingAway), deadline: 100)
                == .sendClose(ClosePayload(code: .goingAway)))
        #expect(ourFirst.timerFired(now: 99) == .none)
        #expect(ourFirst.peerSentClose(ClosePayload(code: .goingAway)) == .shutdown)

        var unanswered = CloseHandshake()
        _ = unanswered.localClose(ClosePayload(code: .goingAway), deadline: 100)
        #expect(unanswered.timerFired(now: 100) == .shutdown)
        #expect(unanswered.state == .closed)

        var violated = CloseHandshake()
        #expect(
            violated.protocolViolated(.invalidUTF8(byteOffset: 3))
                == .sendCloseAndShutdown(ClosePayload(code: .invalidPayload)))
    }
}
