import Foundation
import Testing
import WSProtocol

@testable import PushHub

/// The route table (issue 25 item 4): every admin route is declared once, and what the API
/// decides about a request — 404, 405 and `Allow`, the scope, the query parameters, the audit —
/// is read from that declaration. Each dispatch test sends every route a request.
@Suite struct AdminRouteTableTests: AdminRequests {
    let plane: ControlPlane

    /// A token for each scope but `admin` (the root token is one), named after it, committed.
    init() {
        plane = Self.makePlane()
        for scope in AdminScope.allCases where scope != .admin { addToken(scope.rawValue, [scope]) }
        plane.tickEnded(now: MonotonicClock.now())
    }

    static let methods = ["GET", "HEAD", "PUT", "POST", "DELETE", "PATCH"]
    static let tokenRoutes = AdminRouteTable.all.filter { $0.access != .open }

    /// A path `pattern` matches, with a value its variable may hold.
    static func samplePath(_ pattern: PathPattern) -> String {
        let value = pattern.variable.map(sample)
        let later = pattern.later.map { $0.literal + sample($0.variable) }.joined()
        return value.map { pattern.prefix + $0 + later + pattern.suffix } ?? pattern.prefix
    }

    /// A value `variable` may hold.
    static func sample(_ variable: PathVariable) -> String {
        switch variable {
        case .screen: "news/home"
        case .cohort: "beta"
        case .experiment: "exp"
        case .token: "ci"
        case .sync: "s-1"
        case .consoleFile: "index.html"
        case .release: "r-2"
        case .component: "Carousel"
        case .platform: "ios"
        case .appVersion: "5.0.0"
        case .webhook: "ops"
        }
    }

    func call(_ route: AdminRoute, query: String = "", token: String? = "secret-token", body: String? = nil)
        -> Response?
    {
        let body = body ?? (route.method == "PUT" || route.method == "POST" ? "{}" : "")
        return answer(request(route.method, Self.samplePath(route.path) + query, token: token), body: body)
    }

    func secret(_ scope: AdminScope) -> String { scope == .admin ? "secret-token" : "s-" + scope.rawValue }

    // MARK: - The table

    @Test("docs/admin-api.md lists every route as the declarations make it")
    func docsTable() throws {
        let page = try String(
            contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent().appending(path: "docs/admin-api.md"), encoding: .utf8)
        let begin = try #require(page.range(of: "<!-- route table: generated, do not edit by hand -->\n"))
        let end = try #require(page.range(of: "<!-- end of the route table -->"))
        let documented = String(page[begin.upperBound..<end.lowerBound])
        #expect(
            documented == AdminRouteTable.markdown,
            "docs/admin-api.md's route table differs from the declarations; put this between its markers:\n\(AdminRouteTable.markdown)"
        )
    }

    @Test("no two routes share a method and a path; a path is open for every method or for none")
    func invariants() {
        var seen = Set<String>()
        for route in AdminRouteTable.all {
            #expect(seen.insert("\(route.method) \(route.path)").inserted, "\(route.method) \(route.path) twice")
        }
        for (pattern, routes) in AdminRouteTable.paths {
            #expect(Set(routes.map { $0.access == .open }).count == 1, "\(pattern) is open for some methods only")
            // The path each test sends is its own pattern's: a more specific pattern would take it.
            #expect(AdminRouteTable.resolve(Self.samplePath(pattern)[...])?.pattern == pattern, "\(pattern)")
        }
    }

    @Test("the probes and the console are open; a read needs read (admin for tokens and webhooks); a change the scope of what it changes (DESIGN §14)")
    func scopeOfEachRoute() {
        for route in AdminRouteTable.all {
            let path = route.path.prefix
            let expected: AdminRoute.Access =
                if ["/healthz", "/livez", "/readyz"].contains(path) || path.hasPrefix("/console") {
                    .open
                } else if path.hasPrefix("/v1/tokens") || path.hasPrefix("/v1/webhooks") {
                    .scope(.admin)
                } else if route.method == "GET" {
                    .scope(.read)
                } else if path.hasPrefix("/v1/screens") || path.hasPrefix("/v1/components") || path.hasPrefix("/v1/apps") {
                    .scope(.publish)
                } else if path.hasPrefix("/v1/syncs") || path.hasPrefix("/v1/cohorts") {
                    .scope(.sync)
                } else if path.hasPrefix("/v1/experiments") {
                    .scope(.experiment)
                } else {
                    .scope(.admin)
                }
            #expect(route.access == expected, "\(route.method) \(route.path)")
        }
    }

    @Test("reads are the GET and HEAD routes; only a publish, a sync, an experiment's definition, a release's start and its percent have a dry run")
    func effectOfEachRoute() {
        for route in AdminRouteTable.all {
            let expected: AdminRoute.Effect =
                switch (route.method, route.path.description) {
                case ("GET", _), ("HEAD", _): .read
                case ("PUT", "/v1/screens/{name}"): .changeUnlessDryRun(.query)
                case ("POST", "/v1/syncs"): .changeUnlessDryRun(.body)
                case ("PUT", "/v1/experiments/{key}"): .changeUnlessDryRun(.query)
                case ("POST", "/v1/screens/{name}/releases"): .changeUnlessDryRun(.query)
                case ("POST", "/v1/screens/{name}/releases/{id}/percent"): .changeUnlessDryRun(.query)
                default: .change
                }
            #expect(route.effect == expected, "\(route.method) \(route.path)")
        }
    }

    // MARK: - What the dispatcher reads from it

    @Test("a call is refused 403 naming the scope its route needs exactly when the token lacks it")
    func scopeIsChecked() throws {
        for route in Self.tokenRoutes {
            guard case .scope(let needed) = route.access else { continue }
            for scope in AdminScope.allCases {
                let token = AdminToken(name: scope.rawValue, scopes: [scope], digest: "", createdAt: 0)
                let response = try #require(call(route, token: secret(scope)), "\(route.method) \(route.path)")
                if token.allows(needed) {
                    #expect(response.status != 403, "\(route.method) \(route.path) refused \(scope)")
                } else {
                    #expect(response.status == 403, "\(route.method) \(route.path) let \(scope) in")
                    let message = String(decoding: response.body, as: UTF8.self)
                    #expect(
                        message.contains("needs the \(needed.rawValue) scope; token \(scope.rawValue) has"),
                        "\(message)")
                }
            }
        }
    }

    @Test("a method a path does not have is a 405 whose Allow lists every method the path has")
    func methodNotAllowed() throws {
        for (pattern, routes) in AdminRouteTable.paths {
            let token = routes[0].access == .open ? nil : "secret-token"
            let allowed = routes.map(\.method)
            for method in Self.methods where !allowed.contains(method) {
                let response = try #require(
                    answer(request(method, Self.samplePath(pattern), token: token), body: "{}"), "\(method) \(pattern)")
                #expect(response.status == 405, "\(method) \(pattern)")
                #expect(response.headers["Allow"] == allowed.joined(separator: ", "), "\(method) \(pattern)")
            }
        }
    }

    @Test("a query parameter a route does not take is a 400 naming those it takes; its own pass")
    func unknownParameter() throws {
        for route in AdminRouteTable.all {
            let response = try #require(call(route, query: "?bogus=1"), "\(route.method) \(route.path)")
            guard case .only(let known) = route.query else {
                #expect(response.status != 400, "an open route ignores its query: \(route.method) \(route.path)")
                continue
            }
            #expect(response.errorCode == "unknown_parameter", "\(route.method) \(route.path)")
            let takes = known.isEmpty ? "it takes none" : "it takes \(known.joined(separator: ", "))"
            #expect(String(decoding: response.body, as: UTF8.self).contains(takes), "\(route.method) \(route.path)")
            for name in known {
                let accepted = try #require(call(route, query: "?\(name)=1"), "\(route.method) \(route.path)")
                #expect(accepted.errorCode != "unknown_parameter", "\(route.method) \(route.path) refused \(name)")
            }
        }
    }

    @Test("a change is audited whatever its answer; a read or a dry run is not")
    func auditDecision() throws {
        for route in Self.tokenRoutes {
            var calls: [(query: String, body: String?, changes: Bool)] = [("", nil, route.method != "GET")]
            if route.effect == .changeUnlessDryRun(.query) { calls.append(("?dry_run=true", nil, false)) }
            if route.effect == .changeUnlessDryRun(.body) {
                calls.append(("", #"{"target":{"all":true},"dry_run":true}"#, false))
            }
            for (query, body, changes) in calls {
                plane.audit = AuditRing()
                let response = try #require(call(route, query: query, body: body), "\(route.method) \(route.path)")
                #expect(
                    plane.audit.count == (changes ? 1 : 0), "\(route.method) \(route.path)\(query) → \(response.status)"
                )
                #expect(
                    Self.changes(request(route.method, Self.samplePath(route.path) + query), body: Array((body ?? "{}").utf8))
                        == changes)
            }
        }
    }
}
