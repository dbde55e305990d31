/// Where a hub's links to the shared Redis connect, and how (DESIGN §11): the URL (credentials,
/// database, and the host when Sentinel is not used), Sentinel's answer for the master, and TLS.
struct RedisEndpoint {
    var url: RedisURL
    /// Where the master is now (Sentinel's answer); nil: the URL's host.
    var locate: (() -> SocketAddress?)?
    /// TLS to Redis (`rediss://`).
    var tls: TLSClientContext?

    /// A link's options; under Sentinel the link checks on sign-in that it reached the master
    /// (after a failover the old master comes back as a replica).
    func options(clientName: String) -> RedisConnection.Options {
        var options = RedisConnection.Options(url: url, clientName: clientName)
        options.locate = locate
        options.requireMaster = locate != nil
        options.tls = tls
        return options
    }
}
