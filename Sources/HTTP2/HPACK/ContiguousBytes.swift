extension Collection<UInt8> {
    /// Calls `body` with the octets in contiguous memory: in place when the collection stores
    /// them so (arrays, their slices, buffers), else copied once. Lets a public generic entry
    /// point run one non-generic, fully optimised decoder whatever collection it is handed.
    func withContiguousOctets<Result>(_ body: (UnsafeBufferPointer<UInt8>) -> Result) -> Result {
        withContiguousStorageIfAvailable(body) ?? Array(self).withUnsafeBufferPointer(body)
    }
}
