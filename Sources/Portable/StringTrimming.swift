extension StringProtocol {
    /// Without the leading and trailing characters for which `isTrimmed` holds (Foundation-free:
    /// the hub links without Foundation).
    public func trimming(while isTrimmed: (Character) -> Bool) -> String {
        guard let first = firstIndex(where: { !isTrimmed($0) }), let last = lastIndex(where: { !isTrimmed($0) }) else {
            return ""
        }
        return String(self[first...last])
    }

    /// Without leading and trailing whitespace and newlines.
    public func trimmingWhitespace() -> String { trimming(while: \.isWhitespace) }
}
