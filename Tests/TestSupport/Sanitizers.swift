#if canImport(Glibc)
    import Glibc
#endif

/// Which sanitizer runtime this test process runs under (`make asan`, `make tsan`), for the few
/// tests that observe what a sanitizer replaces.
public enum Sanitizers {
    /// Whether AddressSanitizer is linked in: its allocator then stands in for glibc's `malloc`
    /// (`mallinfo2` reads zeros, `malloc_trim` does nothing).
    public static let isAddressSanitizerActive = dlsym(dlopen(nil, RTLD_NOW), "__asan_init") != nil

    /// Whether ThreadSanitizer is linked in: its allocator too stands in for glibc's.
    public static let isThreadSanitizerActive = dlsym(dlopen(nil, RTLD_NOW), "__tsan_init") != nil

    /// Either: the process does not run glibc's allocator.
    public static let replacesAllocator = isAddressSanitizerActive || isThreadSanitizerActive
}
