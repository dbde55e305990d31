/// A finite automaton decoding HPACK's Huffman code four bits at a time (the approach of
/// nghttp2's and Go's decoders), built once from `HuffmanCode`.
///
/// A state is an inner node of the code tree — the bits read since the last symbol; the root
/// (state 0) means none. The tree has 257 leaves and so 256 inner nodes: a state fits a `UInt8`.
/// For each state and nibble the table holds where the four bits lead, and the symbol completed
/// on the way, if any (a code has at least 5 bits, so at most one completes per nibble).
///
///     transitions[state << 4 | nibble]
///     +-----------+---------+-------------------------------------+
///     | nextState | symbol  | flags: emits symbol / reached EOS    |
///     +-----------+---------+-------------------------------------+
struct HuffmanDecodingTable: Sendable {
    struct Transition: Sendable {
        var nextState: UInt8 = 0
        var symbol: UInt8 = 0
        var emitsSymbol = false
        var reachesEndOfString = false
    }

    static let root: UInt8 = 0
    static let shared = HuffmanDecodingTable()

    /// 256 states × 16 nibbles.
    private var transitions: [Transition]
    /// For each state, how many bits lead to it from the root (its depth) ...
    private var depth: [UInt8]
    /// ... and whether they are all ones: a state can end a string only if both say it is a
    /// prefix of EOS of at most 7 bits (§5.2).
    private var isAllOnes: [Bool]

    /// Applies one nibble: appends the symbol it completes, throws if it completes EOS.
    @inline(__always)
    func step(_ state: inout UInt8, nibble: UInt8, into out: inout [UInt8]) throws(HPACKError) {
        let transition = transitions[Int(state) << 4 | Int(nibble)]
        if transition.reachesEndOfString { throw .huffmanEndOfString }
        if transition.emitsSymbol { out.append(transition.symbol) }
        state = transition.nextState
    }

    /// Throws unless a string may end in `state`: after a whole symbol, or inside a padding of
    /// at most 7 one bits.
    func checkPadding(endingIn state: UInt8) throws(HPACKError) {
        guard isAllOnes[Int(state)] else { throw .huffmanPaddingNotEndOfStringPrefix }
        guard depth[Int(state)] <= 7 else { throw .huffmanPaddingTooLong(bits: Int(depth[Int(state)])) }
    }

    private init() {
        // The code tree: each inner node's two children; a child >= 0 is an inner node, a child
        // < 0 is the leaf of symbol -(child + 1).
        var children: [(Int, Int)] = [(Int.min, Int.min)]
        var depth: [UInt8] = [0]
        var isAllOnes = [true]
        for symbol in 0...HuffmanCode.endOfString {
            let code = HuffmanCode.codes[symbol]
            let length = Int(HuffmanCode.bitLengths[symbol])
            var node = 0
            for position in stride(from: length - 1, through: 0, by: -1) {
                let bit = (code >> position) & 1 == 1
                let existing = bit ? children[node].1 : children[node].0
                let next: Int
                if position == 0 {
                    precondition(existing == Int.min, "the Huffman code is prefix-free")
                    next = -(symbol + 1)
                } else if existing == Int.min {
                    next = children.count
                    children.append((Int.min, Int.min))
                    depth.append(depth[node] + 1)
                    isAllOnes.append(isAllOnes[node] && bit)
                } else {
                    precondition(existing >= 0, "the Huffman code is prefix-free")
                    next = existing
                }
                if bit { children[node].1 = next } else { children[node].0 = next }
                if next >= 0 { node = next }
            }
        }
        precondition(children.count == 256, "a complete code of 257 symbols has 256 inner nodes")

        var transitions = [Transition](repeating: Transition(), count: 256 * 16)
        for state in 0..<256 {
            for nibble in 0..<16 {
                var transition = Transition()
                var node = state
                for position in stride(from: 3, through: 0, by: -1) {
                    let child = (nibble >> position) & 1 == 1 ? children[node].1 : children[node].0
                    guard child < 0 else {
                        node = child
                        continue
                    }
                    let symbol = -(child + 1)
                    if symbol == HuffmanCode.endOfString {
                        transition.reachesEndOfString = true
                        break
                    }
                    transition.symbol = UInt8(symbol)
                    transition.emitsSymbol = true
                    node = 0
                }
                transition.nextState = UInt8(node)
                transitions[state << 4 | nibble] = transition
            }
        }
        self.transitions = transitions
        self.depth = depth
        self.isAllOnes = isAllOnes
    }
}
