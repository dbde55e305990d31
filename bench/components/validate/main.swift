import Foundation
import PushHub

// components-bench: what DESIGN §16's validation costs a publish, in process (no hub, no
// sockets): a 10,001-node screen against 20 registered component schemas (BenchScreen), timed
// as `TreeValidation.violations` runs for a publish. Figures go into bench/README.md
// ("Component validation"); `make bench-components-validate` builds it in release mode and runs it.
//
//   components-bench [--iterations N]

var iterations = 200
var arguments = CommandLine.arguments.dropFirst().makeIterator()
while let flag = arguments.next() {
    guard flag == "--iterations", let value = arguments.next().flatMap(Int.init), value > 0 else {
        FileHandle.standardError.write(Data("usage: components-bench [--iterations N]\n".utf8))
        exit(2)
    }
    iterations = value
}

/// Microseconds of each run of `body`, sorted.
func timed(_ runs: Int, _ body: () -> Int) -> (samples: [Double], result: Int) {
    var samples: [Double] = []
    var result = 0
    for _ in 0..<runs {
        let start = MonotonicClock.now()
        result = body()
        samples.append(Double(MonotonicClock.now() - start) / 1000)
    }
    return (samples.sorted(), result)
}

func percentile(_ sorted: [Double], _ p: Double) -> Double {
    sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]
}

func report(_ label: String, _ run: (samples: [Double], result: Int), unit: String = "violations") {
    print(
        String(
            format: "%@: median %.0f µs, p99 %.0f µs, min %.0f µs (%d %@, %d runs)", label,
            percentile(run.samples, 0.5), percentile(run.samples, 0.99), run.samples[0], run.result, unit,
            run.samples.count))
}

let registration = timed(50) { BenchScreen.components().count }
report("register the 20 components (parse + compile schemas and patterns)", registration, unit: "components")

let components = BenchScreen.components()
let valid = BenchScreen.tree()
let nodes = BenchScreen.nodes(in: valid)
let bytes = JSONWriter.write(valid).count
print("screen: \(nodes) nodes of \(components.count) registered types, \(bytes) bytes canonical")

// Warm-up (first touches of the tree's storage), then the figures.
_ = TreeValidation.violations(in: valid, components: components, strict: false, limit: 1001)

report(
    "validate the valid screen (the publish path)",
    timed(iterations) { TreeValidation.violations(in: valid, components: components, strict: false, limit: 1001).count }
)
report(
    "same with --strict-components",
    timed(iterations) { TreeValidation.violations(in: valid, components: components, strict: true, limit: 1001).count })
let broken = BenchScreen.tree(brokenEvery: 100)
report(
    "validate a screen with 1 node in 100 broken (messages and pointers built)",
    timed(iterations) {
        TreeValidation.violations(in: broken, components: components, strict: false, limit: 1001).count
    })
let wrecked = BenchScreen.tree(brokenEvery: 1)
report(
    "validate a screen with every node broken, stopping at 1001",
    timed(iterations) {
        TreeValidation.violations(in: wrecked, components: components, strict: false, limit: 1001).count
    })
let unrelated = [
    "Unused": try! Component(name: "Unused", body: JSONReader.parse(Array(#"{"versions":{"1":{}}}"#.utf8)))
]
report(
    "walk the screen with one unrelated component registered (the walk and type lookups alone)",
    timed(iterations) { TreeValidation.violations(in: valid, components: unrelated, strict: false, limit: 1001).count })

// Patterns at the limits: compile time (a registration's cost), and one 10,000-scalar string
// matched (a publish's cost) — by the DFA when built, else by the NFA simulation.
let long = String(repeating: "ab", count: 5_000)
for source in [
    "^[a-z0-9]+(-[a-z0-9]+)*$", String(repeating: "x", count: 1000), "(a|b)*a(a|b){8}$", "^.{0,1000}$",
    "(x+x+)+y", "^(a|b|c|d|e|f|g|h|i|j){1,100}$", #"\bab"#, "[ab]{0,1000}c", "(a|b){0,1000}c",
] {
    let compiled = timed(20) { (try? SchemaPattern(source)) != nil ? 1 : 0 }
    let pattern = try! SchemaPattern(source)
    let matched = timed(20) { pattern.matches(long) ? 1 : 0 }
    let shown = source.count > 30 ? String(source.prefix(12)) + "… (\(source.count) scalars)" : source
    print(
        String(
            format: "pattern %@: compile median %.0f µs; a 10,000-scalar string: median %.0f µs (%@)", shown,
            percentile(compiled.samples, 0.5), percentile(matched.samples, 0.5),
            pattern.isDeterministic ? "DFA" : "NFA"))
}
