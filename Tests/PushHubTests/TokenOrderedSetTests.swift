import Testing

@testable import PushHub

@Suite struct TokenOrderedSetTests {
    final class Member: HasToken {
        let token: UInt64
        init(_ token: UInt64) { self.token = token }
    }

    @Test func walksMembersInTokenOrderWhateverTheInsertionOrder() {
        var set = TokenOrderedSet<Member>()
        let tokens: [UInt64] = (0..<500).map { ($0 * 7919) % 500 + 16 }
        for token in tokens { set.insert(Member(token)) }
        #expect(set.count == 500)
        #expect(set.inOrder().map(\.token) == tokens.sorted())
    }

    @Test func aWalkAfterAChangeSeesTheChangeAndAnEarlierWalkDoesNot() {
        var set = TokenOrderedSet<Member>()
        for token: UInt64 in [30, 10, 20] { set.insert(Member(token)) }
        let before = set.inOrder()
        #expect(before.map(\.token) == [10, 20, 30])
        #expect(set.remove(token: 20)?.token == 20)
        #expect(set.remove(token: 20) == nil)
        set.insert(Member(5))
        #expect(before.map(\.token) == [10, 20, 30])
        #expect(set.inOrder().map(\.token) == [5, 10, 30])
        #expect(set[30]?.token == 30)
        #expect(set[20] == nil)
    }

    @Test func insertingAMemberTwiceKeepsOneAndTheWalkCached() {
        var set = TokenOrderedSet<Member>()
        let member = Member(7)
        set.insert(member)
        let first = set.inOrder()
        set.insert(member)
        #expect(set.count == 1)
        #expect(set.inOrder().map(\.token) == first.map(\.token))
        #expect(set.inOrder()[0] === member)
        _ = set.remove(token: 7)
        #expect(set.isEmpty)
        #expect(set.inOrder().isEmpty)
    }
}
