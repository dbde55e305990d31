/// Client-token keys from the control plane's side (DESIGN §18): the JWKS fetcher it drives, the
/// loops' questions about unknown kids, and its answers (`LoopCommand.keysRefreshed`, documented
/// in docs/architecture.md).
extension ControlPlane {
    /// The JWKS fetcher of `config` (`--jwt-jwks`), keeping its answer in `dataDirectory`'s
    /// `jwks.json` (memory only without one); nil without a JWKS.
    static func keyFetcher(config: HubConfig, store: JWTKeyStore?, dataDirectory: String?) -> JWKSFetcher? {
        guard let url = config.jwtJWKS, let store else { return nil }
        return JWKSFetcher(url: url, store: store, cacheFile: dataDirectory.map { $0 + "/jwks.json" })
    }

    /// Gives the fetcher the loops it tells when a fetch ended (at start, with `attach(loops:)`).
    func attachKeys(loops mailboxes: [Mailbox]) { keys?.attach(loops: mailboxes) }

    /// A loop parked a hello whose token names an unknown kid: the JWKS is fetched unless it was
    /// less than 10 s ago; either way the loops hear back. (Loops park only when the store says a
    /// JWKS is fetched, which is when there is a fetcher; without one the hello timeout ends it.)
    func unknownKeyReported(_ kid: String) { keys?.unknownKidReported(kid, now: MonotonicClock.now()) }
}
