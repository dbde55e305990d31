/// One libFuzzer target: a function that takes any bytes and checks properties of the code
/// under test on them. `pushhub-fuzz` runs the one named by `FUZZ_TARGET`; the corpus replay
/// test runs every corpus file through all of them.
///
/// Invariant: `run` never traps on any input unless the code under test does; a property that
/// does not hold is a thrown `PropertyViolation`, which the fuzzer turns into a crash.
public struct FuzzTarget: Sendable {
    /// The name on the command line and of its corpus folder, `Fuzz/corpus/<name>/`.
    public let name: String
    /// A sensible `-max_len` (bytes): room for several frames or requests, a deep JSON text;
    /// for the targets that build, diff and patch two trees, 1 KiB is already trees of hundreds
    /// of nodes, and longer inputs only make each execution slower.
    public let maxLength: Int
    public let run: @Sendable (UnsafeRawBufferPointer) throws(PropertyViolation) -> Void

    public static let all: [FuzzTarget] = [
        FuzzTarget(name: "websocket", maxLength: 4096, run: WebSocketFuzz.run),
        FuzzTarget(name: "http-request", maxLength: 4096, run: RequestParserFuzz.run),
        FuzzTarget(name: "json-reader", maxLength: 4096, run: JSONReaderFuzz.run),
        FuzzTarget(name: "json-patch", maxLength: 1024, run: JSONPatchFuzz.run),
        FuzzTarget(name: "json-diff", maxLength: 1024, run: JSONPatchDiffFuzz.run),
        FuzzTarget(name: "merge-patch", maxLength: 1024, run: MergePatchFuzz.run),
        FuzzTarget(name: "jwt", maxLength: 2048, run: JWTFuzz.run),
        FuzzTarget(name: "hub-options", maxLength: 1024, run: HubOptionsFuzz.run),
        FuzzTarget(name: "resp", maxLength: 4096, run: RESPParserFuzz.run),
        FuzzTarget(name: "component-schema", maxLength: 2048, run: ComponentSchemaFuzz.run),
        FuzzTarget(name: "hpack", maxLength: 4096, run: HPACKFuzz.run),
        FuzzTarget(name: "http2-frames", maxLength: 4096, run: HTTP2FrameFuzz.run),
        FuzzTarget(name: "http1-response", maxLength: 4096, run: HTTP1ResponseFuzz.run),
    ]

    public static func named(_ name: String) -> FuzzTarget? { all.first { $0.name == name } }
}
