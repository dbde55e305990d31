// swift-tools-version:6.0
import PackageDescription

/// PushHub: a WebSocket push-update hub. No package dependencies: OpenSSL comes in as a
/// system library, Linux's epoll/eventfd/signalfd headers through a module map.
///
/// `PUSHHUB_FUZZ=1` adds the libFuzzer executable (`pushhub-fuzz`, built by scripts/fuzz.sh
/// with `-sanitize=fuzzer,address`). It calls libFuzzer's driver, which only that flag links, so
/// other builds do not declare it; the targets it runs live in `FuzzTargets`, which every build
/// compiles and `swift test` replays over the corpus (Fuzz/corpus).
let isFuzzing = Context.environment["PUSHHUB_FUZZ"] == "1"

let package = Package(
    name: "PushHub",
    products: [
        .library(name: "WSProtocol", targets: ["WSProtocol"]),
        .library(name: "PushHub", targets: ["PushHub"]),
        .executable(name: "pushhub", targets: ["pushhub"]),
        .executable(name: "hubctl", targets: ["hubctl"]),
        .executable(name: "ws-testee", targets: ["ws-testee"]),
        .executable(name: "ws-bench", targets: ["ws-bench"]),
    ],
    targets: [
        .systemLibrary(
            name: "COpenSSL",
            pkgConfig: "openssl",
            providers: [.apt(["libssl-dev"])]
        ),
        .systemLibrary(name: "CLinux"),
        // Records the checkout's commit before each build, for `--version`.
        .plugin(name: "BuildInfoPlugin", capability: .buildTool()),
        .target(name: "WSProtocol", dependencies: ["COpenSSL"]),
        .target(
            name: "PushHub", dependencies: ["WSProtocol", "COpenSSL", "CLinux"],
            // Release builds skip the run-time exclusivity checks (`swift_beginAccess` on every
            // access to a loop object's stored properties: 8% of a fan-out's instructions under
            // callgrind). Debug builds, which every test runs, keep them: a violation fails there.
            swiftSettings: [.unsafeFlags(["-enforce-exclusivity=unchecked"], .when(configuration: .release))],
            plugins: ["BuildInfoPlugin"]),
        .executableTarget(name: "pushhub", dependencies: ["PushHub"]),
        .executableTarget(name: "hubctl", dependencies: ["PushHub", "WSProtocol"]),
        .executableTarget(
            name: "ws-testee", dependencies: ["PushHub", "WSProtocol"], path: "Tests/Conformance/ws-testee"),
        .executableTarget(name: "ws-bench", dependencies: ["PushHub", "WSProtocol", "CLinux"], path: "bench/ws-bench"),
        .target(name: "FuzzTargets", dependencies: ["PushHub", "WSProtocol", "COpenSSL"], path: "Fuzz/FuzzTargets"),
        .target(name: "TestSupport", path: "Tests/TestSupport"),
        .testTarget(name: "WSProtocolTests", dependencies: ["WSProtocol", "TestSupport"]),
        .testTarget(name: "PushHubTests", dependencies: ["PushHub", "WSProtocol", "TestSupport"]),
        .testTarget(name: "FuzzTargetsTests", dependencies: ["FuzzTargets"]),
    ]
        + (isFuzzing
            ? [
                .systemLibrary(name: "CLibFuzzer", path: "Fuzz/CLibFuzzer"),
                .executableTarget(
                    name: "pushhub-fuzz", dependencies: ["FuzzTargets", "CLibFuzzer"], path: "Fuzz/pushhub-fuzz"),
            ] : []),
    swiftLanguageModes: [.v6]
)
