import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A real `redis-server` (Debian's package) on a free loopback port, in its own temporary
/// directory, for the tests of the Redis link and of hubs scaled out over Redis (DESIGN §11).
/// Without redis-server installed this throws, saying how to install it: the tests fail, they do
/// not skip.
public final class RedisServer: @unchecked Sendable {
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    public let port: Int
    public let directory: String
    private let extraArguments: [String]
    private var process: Process?

    /// A server that speaks TLS only, on `port`, with `certificate` and `key` (PEM); clients are
    /// not asked for certificates.
    public convenience init(tlsCertificate certificate: String, key: String) throws {
        try self.init(port: try Self.freePort(), tls: (certificate, key))
    }

    private convenience init(port: Int, tls: (certificate: String, key: String)) throws {
        try self.init(
            arguments: [
                "--port", "0", "--tls-port", String(port), "--tls-cert-file", tls.certificate, "--tls-key-file", tls.key,
                "--tls-ca-cert-file", tls.certificate, "--tls-auth-clients", "no",
            ], port: port)
    }

    /// Starts a server with `arguments` added to its command line (e.g. `["--requirepass", "pw"]`).
    public init(arguments: [String] = [], port: Int? = nil) throws {
        self.port = try port ?? Self.freePort()
        directory = NSTemporaryDirectory() + "pushhub-redis-\(getpid())-\(self.port)"
        extraArguments = arguments
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try start()
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(atPath: directory)
    }

    public static func executable(_ name: String) throws -> String {
        for folder in ["/usr/bin", "/usr/local/bin", "/usr/sbin"] where FileManager.default.isExecutableFile(atPath: "\(folder)/\(name)") {
            return "\(folder)/\(name)"
        }
        throw Failure(
            description: "\(name) is not installed: `make test` installs it (apt-get install -y redis-server redis-tools); "
                + "the Redis tests need a real server and do not skip")
    }

    /// Starts the server (again, after `stop`) on the same port and directory.
    public func start() throws {
        let server = Process()
        server.executableURL = URL(fileURLWithPath: try Self.executable("redis-server"))
        server.arguments = [
            "--port", String(port), "--bind", "127.0.0.1", "--dir", directory, "--save", "", "--appendonly", "no",
            "--enable-debug-command", "yes", "--logfile", directory + "/redis.log",
        ] + extraArguments
        server.standardOutput = FileHandle.nullDevice
        try server.run()
        process = server
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            if Self.accepts(port: port) { return }
            usleep(20_000)
        }
        throw Failure(description: "redis-server did not accept on port \(port) within 10 s; see \(directory)/redis.log")
    }

    /// Stops the server at once (SIGKILL): what a crash or a pulled cable looks like to its clients.
    public func stop() {
        guard let process, process.isRunning else { return }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        self.process = nil
    }

    /// Runs `redis-cli` against this server; its standard output, trimmed.
    @discardableResult
    public func cli(_ arguments: [String]) throws -> String {
        let cli = Process()
        cli.executableURL = URL(fileURLWithPath: try Self.executable("redis-cli"))
        cli.arguments = ["-p", String(port)] + arguments
        let output = Pipe()
        cli.standardOutput = output
        try cli.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        cli.waitUntilExit()
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    private static func accepts(port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        } == 0
    }

    /// A port no one listens on now (bound to 0, read, released).
    public static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket failed") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        guard bound else { throw Failure(description: "cannot bind a free loopback port") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
