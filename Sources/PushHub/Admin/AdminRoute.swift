/// One admin route, everything known about it in one value (`AdminRouteTable.all`): its method
/// and path, who may call it, the query parameters it takes, whether a call changes something
/// (the audit rule), and its handler. Dispatch, 404, 405 with `Allow`, the scope check, the
/// parameter check, the audit decision and the docs' route table are all read from these.
struct AdminRoute: Sendable {
    /// Who may call a route.
    enum Access: Equatable, Sendable {
        /// Anyone, without a token: `/healthz` and the console's files, which hold no hub data.
        /// Answered at once (they do not read the hub's state) and never audited.
        case open
        /// A token that allows this scope (DESIGN §14; `AdminToken.allows`).
        case scope(AdminScope)
    }

    /// The query parameters a route takes.
    enum Query: Equatable, Sendable {
        /// These, and no other (DESIGN §14: `?app_verison=` must not quietly answer for the latest
        /// version): any other is a 400 `unknown_parameter`.
        case only([String])
        /// Any, unread: an open route (a load balancer's probe, a page's cache-busting query).
        case ignored
    }

    /// Whether a call changes something: the audit rule (DESIGN §14: changes are logged, reads and
    /// dry runs are not unless refused for their token) and when the call runs (`AdminAPI`: a
    /// read once everything mutated before it is durable).
    enum Effect: Equatable, Sendable {
        case read
        case change
        /// A change, unless the call only asks what it would do (`DryRun`): then a read.
        case changeUnlessDryRun(DryRun)

        /// The effect of a request no route takes (a 404 or 405), by its method: anything but
        /// `GET` and `HEAD` would change something, so its refusal is audited.
        static func withoutRoute(method: String) -> Effect { method == "GET" || method == "HEAD" ? .read : .change }

        /// Whether a call of a route with this effect may change something.
        func changes(_ head: RequestHead, body: [UInt8]) -> Bool {
            switch self {
            case .read: false
            case .change: true
            case .changeUnlessDryRun(let dryRun): !dryRun.isAsked(head, body: body)
            }
        }
    }

    /// How a call says it is a dry run.
    enum DryRun: Equatable, Sendable {
        /// `?dry_run=true` (or `1`): a publish's dry run (`hubctl screen diff`).
        case query
        /// `"dry_run": true` in the JSON body: a sync's (the console sends one as a target is edited).
        case body

        func isAsked(_ head: RequestHead, body: [UInt8]) -> Bool {
            switch self {
            case .query:
                return head.queryFlag("dry_run") == true
            case .body:
                // A body that is not JSON is refused by the route with a 400; as a change it is
                // audited, so `try?` hides nothing here.
                return (try? JSONReader.parse(body))?["dry_run"] == .bool(true)
            }
        }
    }

    typealias Handler = @Sendable (AdminCall) throws(AdminError) -> Void

    let method: String
    let path: PathPattern
    let access: Access
    let query: Query
    let effect: Effect
    let handle: Handler

    /// A route whose handler is `action` of the handler group `Handlers`, made for each call:
    /// `AdminRoute("GET", "/v1/screens/{name:screen}/history", .scope(.read), .read, ScreenRoutes.history)`.
    init<Handlers: AdminHandlers>(
        _ method: String, _ path: String, _ access: Access, _ effect: Effect, query: [String] = [],
        _ action: @escaping @Sendable (Handlers) -> () throws(AdminError) -> Void
    ) {
        self.method = method
        self.path = PathPattern(path)
        self.access = access
        self.query = access == .open ? .ignored : .only(query)
        self.effect = effect
        handle = { call throws(AdminError) in try action(Handlers(call))() }
        precondition(
            access != .open || (effect == .read && query.isEmpty),
            "an open route only reads, and takes any query: it declares none")
    }
}

/// A group of admin route handlers (`ScreenRoutes`, `SyncRoutes`, …), made for one call; the
/// route table names its methods (the table is shared by every thread, so it holds the type).
protocol AdminHandlers: SendableMetatype {
    init(_ call: AdminCall)
    var call: AdminCall { get }
}

extension AdminHandlers {
    var plane: ControlPlane { call.plane }
    var reply: AdminReply { call.reply }
}
