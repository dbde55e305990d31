import WSProtocol

/// The admin HTTP API (DESIGN §7): finds a request's route in `AdminRouteTable` and answers.
///
/// A request is refused, in this order: 401 without a valid token (but on an open route), 404
/// when no path matches, 405 with `Allow` (every method of the path) when the path has no route
/// for its method, 403 when the token lacks the route's scope, 400 `unknown_parameter` for a query
/// parameter the route does not take, 503 `draining` for a change once the hub is shutting down,
/// 422 for a path variable the route may not have (a bad screen name); then the route's handler
/// runs. Every error is `{"error":{"code","message"}}`.
///
/// Invariants: a call that only reads (its route's `Effect`, a dry run included) is
/// authenticated, checked and handled once everything mutated before it is durable
/// (`ControlPlane.afterCommit`), against the committed state, so neither its answer nor its token
/// can be one a failed or lost batch takes back. A change is authenticated against the state it is made on (`plane.state`): a
/// token created in the same tick commits or fails with the change (one batch), and a batch that
/// lost the race for the shared journal runs again from the start, authentication included. The
/// root token is compared in constant time. Handlers run on the control plane's loop; a change
/// answers after its record is durable and its change reached the loops (DESIGN §7, §9).
struct AdminAPI {
    let plane: ControlPlane

    func handle(_ head: RequestHead, body: [UInt8], reply: AdminReply) {
        let resolved = AdminRouteTable.resolve(head.path)
        if let resolved, resolved.access == .open {
            // `/healthz` and the console's files: no token, no audit, no hub state to wait for.
            guard let route = resolved.route(for: head.method) else {
                return reply.error(resolved.methodNotAllowed(head))
            }
            return run(route, resolved, call(head, body, token: nil, resolved, changes: false, reply: reply))
        }
        let effect = resolved?.effect(of: head.method) ?? .withoutRoute(method: head.method)
        let changes = effect.changes(head, body: body)
        let serve = { serveWithToken(head, body: body, resolved: resolved, changes: changes, reply: reply) }
        if changes {
            serve()
        } else {
            plane.afterCommit(serve)
        }
    }

    private func serveWithToken(
        _ head: RequestHead, body: [UInt8], resolved: ResolvedPath?, changes: Bool, reply: AdminReply
    ) {
        let token = authenticate(head, in: changes ? plane.state : plane.committed)
        let audited = AuditLog.reply(for: head, changes: changes, token: token, plane: plane, sending: reply)
        guard let token else { return audited(Self.unauthorized) }
        do throws(AdminError) {
            guard let resolved else { throw AdminError.notFound("no admin route \(head.method) \(head.path)") }
            guard let route = resolved.route(for: head.method) else { throw resolved.methodNotAllowed(head) }
            if case .scope(let needed) = route.access, !token.allows(needed) {
                let has = token.scopes.sorted().map(\.rawValue).joined(separator: ", ")
                throw AdminError(
                    403, "forbidden",
                    "\(head.method) \(head.path) needs the \(needed.rawValue) scope; token \(token.name) has \(has)")
            }
            if case .only(let known) = route.query { try refuseUnknownParameters(head, known: known) }
            if changes && plane.metrics.draining.load(ordering: .acquiring) { throw Self.draining }
            run(route, resolved, call(head, body, token: token, resolved, changes: changes, reply: audited))
        } catch {
            audited.error(error)
        }
    }

    /// Checks the path's variable, then runs the route's handler; its refusal is the answer.
    private func run(_ route: AdminRoute, _ resolved: ResolvedPath, _ call: AdminCall) {
        do throws(AdminError) {
            if let refusal = resolved.pattern.variable?.refusal(of: resolved.variable) { throw refusal }
            for (part, value) in zip(resolved.pattern.later, resolved.variables.dropFirst()) {
                if let refusal = part.variable.refusal(of: value) { throw refusal }
            }
            try route.handle(call)
        } catch {
            call.reply.error(error)
        }
    }

    private func call(
        _ head: RequestHead, _ body: [UInt8], token: AdminToken?, _ resolved: ResolvedPath, changes: Bool,
        reply: AdminReply
    ) -> AdminCall {
        AdminCall(
            plane: plane, head: head, body: body, token: token, variables: resolved.variables, changes: changes,
            reply: reply)
    }

    private static var unauthorized: Response {
        var response = Response.error(
            401, code: "unauthorized",
            message: "send Authorization: Bearer <token>; the root token is in admin.token in the data dir")
        response.headers.append(name: "WWW-Authenticate", value: "Bearer")
        return response
    }

    /// A change sent after SIGTERM: nothing is made; the load balancer has (or soon will have)
    /// taken this hub out, and another hub, or this one restarted, can make it.
    private static let draining = AdminError(
        503, "draining", "the hub is shutting down and makes no more changes; send it to another hub or retry once this one is back")

    private func refuseUnknownParameters(_ head: RequestHead, known: [String]) throws(AdminError) {
        for (name, _) in head.query where !known.contains(name) {
            let hint = NearestName.suggest(name, among: known).map { " (did you mean \($0)?)" } ?? ""
            let accepted = known.isEmpty ? "it takes none" : "it takes \(known.joined(separator: ", "))"
            throw AdminError(
                400, "unknown_parameter",
                "\(head.method) \(head.path) has no query parameter \"\(name)\"\(hint); \(accepted)")
        }
    }

    /// The token a request presents: the root token (compared in constant time) or a named one
    /// (found by the SHA-256 of what was presented, in `state`); nil when neither.
    private func authenticate(_ head: RequestHead, in state: HubState) -> AdminToken? {
        guard let value = head.headers["Authorization"], value.hasPrefix("Bearer ") else { return nil }
        let presented = String(value.dropFirst(7))
        if JWTVerifier.constantTimeEquals(Array(presented.utf8), Array(plane.adminToken.utf8)) { return .root() }
        return state.adminToken(presented: presented)
    }
}
