import Testing

@testable import PushHub

@Suite struct ChunkedListTests {
    @Test func itKeepsTheOrderOfAnArrayThroughAppendsRemovalsAndUpdates() {
        var list = ChunkedList<Int>()
        var model: [Int] = []
        var random = SystemRandomNumberGenerator()
        for step in 0..<5000 {
            switch Int.random(in: 0..<10, using: &random) {
            case 0..<6:
                list.append(step)
                model.append(step)
            case 6:
                #expect(list.removeFirst() == (model.isEmpty ? nil : model.removeFirst()))
            case 7, 8:
                guard let target = model.randomElement(using: &random) else { continue }
                #expect(list.update(first: { $0 == target }) { _ in false })
                model.removeAll { $0 == target }
            default:
                guard let target = model.randomElement(using: &random) else { continue }
                #expect(list.update(first: { $0 == target }) { $0 = -$0; return true })
                model = model.map { $0 == target ? -$0 : $0 }
            }
            #expect(Array(list) == model && list.count == model.count && list.first == model.first)
        }
        #expect(!list.update(first: { _ in false }) { _ in true })
    }

    @Test func equalListsHoldTheSameElementsHoweverTheyAreChunked() {
        var a = ChunkedList<Int>()
        var b = ChunkedList<Int>()
        for i in 0..<600 { a.append(i) }
        for i in 0..<300 { a.update(first: { $0 == i }) { _ in false } }
        for i in 300..<600 { b.append(i) }
        #expect(a == b)
        b.append(1)
        #expect(a != b)
    }
}
