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
/// `PUSHHUB_DIST=1` (scripts/dist/binaries.sh, `make dist`): the binaries an operator installs.
/// hubctl then leaves out the client's URLSession transport on Linux (it uses the socket one),
/// so that static linking does not bring Foundation's networking and libcurl's 25 libraries.
let isDist = Context.environment["PUSHHUB_DIST"] == "1"

/// Where the client's Linux-only dependencies apply (its socket transport and OpenSSL).
let linux: [Platform] = [.linux]

let package = Package(
    name: "PushHub",
    // The client (PushHubClient) builds for Apple's platforms too: its API uses `Duration` and
    // `ContinuousClock`, which Apple ships from iOS 16 and macOS 13 (docs/clients.md "iOS").
    // The hub and its tools run on Linux only.
    platforms: [.iOS(.v16), .macOS(.v13)],
    products: [
        .library(name: "WSProtocol", targets: ["WSProtocol"]),
        .library(name: "ScreenTree", targets: ["ScreenTree"]),
        .library(name: "PushHub", targets: ["PushHub"]),
        .library(name: "PushHubClient", targets: ["PushHubClient"]),
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
        // zlib, for permessage-deflate (RFC 7692).
        .systemLibrary(name: "CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
        // Records the checkout's commit before each build, for `--version`.
        .plugin(name: "BuildInfoPlugin", capability: .buildTool()),
        // Pure Swift that builds on every platform (no libc, no OpenSSL): UTF-8 validation, HTTP
        // header fields, reconnect backoff, duration units. WSProtocol and Sockets re-export it.
        .target(name: "Portable"),
        .target(name: "WSProtocol", dependencies: ["Portable", "COpenSSL", "CZlib"]),
        // The screen tree shared by the hub and its Swift client: JSON values, RFC 8785 writing,
        // RFC 6901 pointers, RFC 6902 patches, SHA-256 screen hashes (OpenSSL on Linux, CryptoKit
        // on Apple's platforms). No sockets, threads or clocks.
        .target(name: "ScreenTree", dependencies: ["Portable", .target(name: "COpenSSL", condition: .when(platforms: linux))]),
        // Host:port addresses, name resolution, errno errors and a blocking TCP socket with
        // timeouts: what the hub and its clients and tools share about sockets (Linux).
        .target(name: "Sockets", dependencies: ["Portable"]),
        // HTTP/2 (RFC 9113) as pure values: HPACK (RFC 7541, with Huffman), frames, and the client
        // side of a connection as a state machine returning actions. No sockets, clocks or
        // threads: the hub drives it on its event loop (Push/HTTP2Link) to reach APNs and FCM.
        .target(name: "HTTP2", dependencies: ["Portable"]),
        // HTTP/1.1 (RFC 9112) client messages as pure values: URLs, requests, an incremental
        // response parser. The hub drives it on its event loop (Outbound/) to fetch JWKS and
        // deliver webhooks (DESIGN §18).
        .target(name: "HTTP1", dependencies: ["Portable"]),
        // The Swift client of protocol v1 (DESIGN §12), for apps and tools (hubctl watch). On Apple's
        // platforms it is ScreenTree, Portable and the system's frameworks (URLSession, CryptoKit);
        // on Linux it adds its socket transport (WSProtocol over Sockets, TLS from OpenSSL).
        // scripts/check-client-portability.py checks the Apple side as far as Linux can.
        // `PUSHHUB_SOCKET_TRANSPORT` compiles SocketTransport/ where those dependencies are;
        // `PUSHHUB_NO_URLSESSION` (dist builds) leaves URLSessionTransport out on Linux.
        .target(
            name: "PushHubClient",
            dependencies: [
                "ScreenTree", "Portable",
                .target(name: "Sockets", condition: .when(platforms: linux)),
                .target(name: "WSProtocol", condition: .when(platforms: linux)),
                .target(name: "COpenSSL", condition: .when(platforms: linux)),
            ],
            swiftSettings: [.define("PUSHHUB_SOCKET_TRANSPORT", .when(platforms: linux))]
                + (isDist ? [.define("PUSHHUB_NO_URLSESSION", .when(platforms: linux))] : [])),
        .target(
            name: "PushHub", dependencies: ["ScreenTree", "Sockets", "WSProtocol", "HTTP2", "HTTP1", "COpenSSL", "CLinux"],
            // Release builds skip the run-time exclusivity checks (`swift_beginAccess` on every
            // access to a loop object's stored properties: 8% of a fan-out's instructions under
            // callgrind). Debug builds, which every test runs, keep them: a violation fails there.
            swiftSettings: [.unsafeFlags(["-enforce-exclusivity=unchecked"], .when(configuration: .release))],
            plugins: ["BuildInfoPlugin"]),
        .executableTarget(name: "pushhub", dependencies: ["PushHub"]),
        .executableTarget(name: "hubctl", dependencies: ["PushHub", "PushHubClient", "WSProtocol"]),
        .executableTarget(
            name: "ws-testee", dependencies: ["PushHubClient", "Sockets", "WSProtocol"], path: "Tests/Conformance/ws-testee"),
        .executableTarget(
            name: "ws-bench", dependencies: ["PushHub", "PushHubClient", "WSProtocol", "CLinux", "COpenSSL", "TestSupport"], path: "bench/ws-bench"),
        // DESIGN §16: validating a 10,000-node screen against 20 component schemas (bench/README.md).
        .executableTarget(name: "components-bench", dependencies: ["PushHub"], path: "bench/components/validate"),
        // DESIGN §18: client-token verifications per second per algorithm (bench/README.md "Token verification").
        .executableTarget(name: "tokens-bench", dependencies: ["PushHub"], path: "bench/tokens/verify"),
        .target(name: "FuzzTargets", dependencies: ["PushHub", "WSProtocol", "HTTP2", "HTTP1", "COpenSSL"], path: "Fuzz/FuzzTargets"),
        .target(name: "TestSupport", path: "Tests/TestSupport"),
        .testTarget(name: "WSProtocolTests", dependencies: ["WSProtocol", "TestSupport"]),
        .testTarget(name: "ScreenTreeTests", dependencies: ["ScreenTree"]),
        .testTarget(name: "HTTP2Tests", dependencies: ["HTTP2", "TestSupport"]),
        .testTarget(name: "HTTP1Tests", dependencies: ["HTTP1", "TestSupport"]),
        .testTarget(name: "PushHubTests", dependencies: ["PushHub", "PushHubClient", "WSProtocol", "HTTP1", "TestSupport"]),
        .testTarget(name: "PushHubClientTests", dependencies: ["PushHubClient", "PushHub", "TestSupport"]),
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
