import CLibFuzzer
import FuzzTargets

#if canImport(Glibc)
    import Glibc
#endif

// pushhub-fuzz FUZZ-FLAGS [CORPUS...], with FUZZ_TARGET naming the target: libFuzzer (linked by
// -sanitize=fuzzer; PUSHHUB_FUZZ=1 declares this executable) runs it on every input.
// FUZZ_TARGET=list prints each target's name and -max_len (for scripts/fuzz.sh).
//
// SwiftPM gives every executable its own `main` (it renames this file's entry point and points
// `main` at it), which shadows libFuzzer's; so this `main` starts libFuzzer's driver itself.

let name = getenv("FUZZ_TARGET").map { String(cString: $0) } ?? ""
if name == "list" {
    for target in FuzzTarget.all { print(target.name, target.maxLength) }
    exit(0)
}

/// The target this process fuzzes; a missing or unknown name stops it before the first input.
let selected: FuzzTarget = {
    guard let target = FuzzTarget.named(name) else {
        let names = FuzzTarget.all.map(\.name).joined(separator: ", ")
        printToStandardError("pushhub-fuzz: set FUZZ_TARGET to one of: \(names) (got '\(name)')")
        exit(2)
    }
    return target
}()

/// libFuzzer's entry point: one input; a property violation aborts, so the input is saved.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    do {
        try selected.run(UnsafeRawBufferPointer(start: data, count: size))
    } catch {
        printToStandardError("pushhub-fuzz \(selected.name): property violated: \(error)")
        abort()
    }
    return 0
}

func printToStandardError(_ line: String) {
    let bytes = Array((line + "\n").utf8)
    _ = bytes.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
}

var argc = CommandLine.argc
var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
exit(LLVMFuzzerRunDriver(&argc, &argv, fuzz))
