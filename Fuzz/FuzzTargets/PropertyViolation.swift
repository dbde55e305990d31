/// A property of the code under test that did not hold for a fuzzer's input; the sentence
/// says which, with the values that broke it.
public struct PropertyViolation: Error, CustomStringConvertible {
    public var description: String
}

/// Throws a `PropertyViolation` saying `message` unless `condition` holds.
func check(_ condition: Bool, _ message: @autoclosure () -> String) throws(PropertyViolation) {
    if !condition { throw PropertyViolation(description: message()) }
}
