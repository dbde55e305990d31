/// The transport a `PushHubClient` uses unless the app names one: `URLSessionTransport` on Apple's
/// platforms (what iOS apps use: App Transport Security, the system's proxies and certificates),
/// `SocketTransport` on Linux (tools and servers: Linux's URLSession has no WebSockets).
public enum PlatformTransport {
    public static var standard: any ClientTransport {
        #if PUSHHUB_SOCKET_TRANSPORT
            SocketTransport()
        #else
            URLSessionTransport()
        #endif
    }
}
