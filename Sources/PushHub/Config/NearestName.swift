/// "Did you mean …?" for a mistyped option or field: the known name closest to what was typed,
/// when it is close enough to be the one meant (DESIGN §14).
public enum NearestName {
    /// The known name within edit distance 2 (1 for names of 4 characters or fewer) of `typed`,
    /// the closest first; nil when none is that close.
    public static func suggest(_ typed: String, among known: [String]) -> String? {
        let typedCharacters = Array(typed.lowercased())
        var best: (name: String, distance: Int)?
        for name in known {
            let nameCharacters = Array(name.lowercased())
            let allowed = min(nameCharacters.count, typedCharacters.count) <= 4 ? 1 : 2
            // The distance is at least the difference in length: a name that cannot be close is
            // not measured (a 1 KB typo costs nothing against short names).
            guard abs(nameCharacters.count - typedCharacters.count) <= allowed else { continue }
            let distance = editDistance(typedCharacters, nameCharacters)
            if distance <= allowed, distance < (best?.distance ?? .max) { best = (name, distance) }
        }
        return best?.name
    }

    /// Optimal string alignment distance: insertions, deletions, substitutions and swaps of
    /// neighbours (`platfrom` is one edit from `platform`).
    static func editDistance(_ a: [Character], _ b: [Character]) -> Int {
        guard !a.isEmpty else { return b.count }
        guard !b.isEmpty else { return a.count }
        var previousRow: [Int] = []
        var row = Array(0...b.count)
        for i in 1...a.count {
            let beforeRow = previousRow
            previousRow = row
            row = [i] + Array(repeating: 0, count: b.count)
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                row[j] = min(previousRow[j] + 1, row[j - 1] + 1, previousRow[j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    row[j] = min(row[j], beforeRow[j - 2] + 1)
                }
            }
        }
        return row[b.count]
    }
}
