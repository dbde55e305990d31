/// Every admin route (DESIGN §7, §13, §14; docs/admin-api.md "Routes", which a test checks
/// against this table). A route's declaration is the only place its method, path, scope, query
/// parameters, audit rule and handler are written.
///
/// Invariants (checked by `AdminRouteTableTests`): no two routes share a method and a path; the
/// routes of one path are all open or all need a token; a route that reads needs `read` (or
/// `admin`, for tokens), one that changes the scope of what it changes.
enum AdminRouteTable {
    static let all: [AdminRoute] = [
        // Open: they hold no hub data.
        AdminRoute("GET", "/healthz", .open, .read, HubRoutes.health),
        AdminRoute("HEAD", "/healthz", .open, .read, HubRoutes.health),
        AdminRoute("GET", "/livez", .open, .read, HubRoutes.live),
        AdminRoute("HEAD", "/livez", .open, .read, HubRoutes.live),
        AdminRoute("GET", "/readyz", .open, .read, HubRoutes.ready),
        AdminRoute("HEAD", "/readyz", .open, .read, HubRoutes.ready),
        AdminRoute("GET", "/console", .open, .read, ConsoleRoutes.file),
        AdminRoute("GET", "/console/{file:console}", .open, .read, ConsoleRoutes.file),

        // The hub and the caller.
        AdminRoute("GET", "/v1/stats", .scope(.read), .read, HubRoutes.stats),
        AdminRoute("GET", "/metrics", .scope(.read), .read, HubRoutes.metrics),
        AdminRoute("GET", "/v1/whoami", .scope(.read), .read, TokenRoutes.whoAmI),
        AdminRoute("GET", "/v1/audit", .scope(.read), .read, query: ["limit"], AuditRoutes.recent),
        AdminRoute("GET", "/v1/clients", .scope(.read), .read, query: ["user"], SyncRoutes.clients),
        AdminRoute("GET", "/v1/clients/summary", .scope(.read), .read, SyncRoutes.clientSummary),
        AdminRoute("GET", "/v1/devices", .scope(.read), .read, query: ["user", "device", "limit"], DeviceRoutes.list),

        // Screens.
        AdminRoute("GET", "/v1/screens", .scope(.read), .read, ScreenRoutes.list),
        AdminRoute(
            "GET", "/v1/screens/{name:screen}", .scope(.read), .read,
            query: ["user", "device", "platform", "app_version", "components"], ScreenRoutes.get),
        AdminRoute(
            "PUT", "/v1/screens/{name:screen}", .scope(.publish), .changeUnlessDryRun(.query),
            query: ["dry_run", "message"], ScreenRoutes.put),
        AdminRoute("DELETE", "/v1/screens/{name:screen}", .scope(.publish), .change, ScreenRoutes.delete),
        AdminRoute("GET", "/v1/screens/{name:screen}/history", .scope(.read), .read, ScreenRoutes.history),
        AdminRoute(
            "GET", "/v1/screens/{name:screen}/diff", .scope(.read), .read, query: ["from", "to"], ScreenRoutes.diff),
        AdminRoute("POST", "/v1/screens/{name:screen}/rollback", .scope(.publish), .change, ScreenRoutes.rollback),

        // Releases (DESIGN §15).
        AdminRoute("GET", "/v1/screens/{name:screen}/releases", .scope(.read), .read, ReleaseRoutes.list),
        AdminRoute(
            "POST", "/v1/screens/{name:screen}/releases", .scope(.publish), .changeUnlessDryRun(.query),
            query: ["dry_run"], ReleaseRoutes.start),
        AdminRoute("GET", "/v1/screens/{name:screen}/releases/{id:release}", .scope(.read), .read, ReleaseRoutes.get),
        AdminRoute(
            "POST", "/v1/screens/{name:screen}/releases/{id:release}/percent", .scope(.publish),
            .changeUnlessDryRun(.query), query: ["dry_run"], ReleaseRoutes.setPercent),
        AdminRoute(
            "POST", "/v1/screens/{name:screen}/releases/{id:release}/promote", .scope(.publish), .change,
            ReleaseRoutes.promote),
        AdminRoute(
            "POST", "/v1/screens/{name:screen}/releases/{id:release}/halt", .scope(.publish), .change,
            ReleaseRoutes.halt),

        // Components and app profiles (DESIGN §16).
        AdminRoute("GET", "/v1/components", .scope(.read), .read, ComponentRoutes.list),
        AdminRoute("GET", "/v1/components/{name:component}", .scope(.read), .read, ComponentRoutes.get),
        AdminRoute(
            "PUT", "/v1/components/{name:component}", .scope(.publish), .change, query: ["force"], ComponentRoutes.put),
        AdminRoute("DELETE", "/v1/components/{name:component}", .scope(.publish), .change, ComponentRoutes.delete),
        AdminRoute("GET", "/v1/apps", .scope(.read), .read, AppProfileRoutes.list),
        AdminRoute(
            "GET", "/v1/apps/{platform:platform}/{version:app_version}/components", .scope(.read), .read,
            AppProfileRoutes.get),
        AdminRoute(
            "PUT", "/v1/apps/{platform:platform}/{version:app_version}/components", .scope(.publish), .change,
            AppProfileRoutes.put),
        AdminRoute(
            "DELETE", "/v1/apps/{platform:platform}/{version:app_version}/components", .scope(.publish), .change,
            AppProfileRoutes.delete),

        // Syncs.
        AdminRoute("GET", "/v1/syncs", .scope(.read), .read, query: ["limit"], SyncRoutes.list),
        AdminRoute("POST", "/v1/syncs", .scope(.sync), .changeUnlessDryRun(.body), SyncRoutes.send),
        AdminRoute("GET", "/v1/syncs/{id:sync}", .scope(.read), .read, SyncRoutes.status),

        // Cohorts.
        AdminRoute("GET", "/v1/cohorts", .scope(.read), .read, CohortRoutes.list),
        AdminRoute("GET", "/v1/cohorts/{name:cohort}", .scope(.read), .read, CohortRoutes.get),
        AdminRoute("PUT", "/v1/cohorts/{name:cohort}", .scope(.sync), .change, CohortRoutes.put),
        AdminRoute("DELETE", "/v1/cohorts/{name:cohort}", .scope(.sync), .change, CohortRoutes.delete),
        AdminRoute("POST", "/v1/cohorts/{name:cohort}/users", .scope(.sync), .change, CohortRoutes.editUsers),
        AdminRoute("PUT", "/v1/cohorts/{name:cohort}/rule", .scope(.sync), .change, CohortRoutes.setRule),

        // Experiments.
        AdminRoute("GET", "/v1/experiments", .scope(.read), .read, ExperimentRoutes.list),
        AdminRoute("GET", "/v1/experiments/{key:experiment}", .scope(.read), .read, ExperimentRoutes.get),
        AdminRoute(
            "PUT", "/v1/experiments/{key:experiment}", .scope(.experiment), .changeUnlessDryRun(.query),
            query: ["dry_run"], ExperimentRoutes.put),
        AdminRoute("DELETE", "/v1/experiments/{key:experiment}", .scope(.experiment), .change, ExperimentRoutes.delete),
        AdminRoute(
            "POST", "/v1/experiments/{key:experiment}/status", .scope(.experiment), .change, ExperimentRoutes.setStatus),
        AdminRoute(
            "POST", "/v1/experiments/{key:experiment}/traffic", .scope(.experiment), .change,
            ExperimentRoutes.setTraffic),
        AdminRoute(
            "GET", "/v1/experiments/{key:experiment}/assignment", .scope(.read), .read,
            query: ["unit", "platform", "app_version"], ExperimentRoutes.assignment),
        AdminRoute("GET", "/v1/experiments/{key:experiment}/results", .scope(.read), .read, ExperimentRoutes.results),
        AdminRoute(
            "POST", "/v1/experiments/{key:experiment}/overrides", .scope(.experiment), .change,
            ExperimentRoutes.setOverride),
        AdminRoute(
            "GET", "/v1/experiments/{key:experiment}/preview", .scope(.read), .read, query: ["screen"],
            ExperimentRoutes.preview),


        // Webhooks (DESIGN §18): every call needs `admin` (a webhook receives the hub's events).
        AdminRoute("GET", "/v1/webhooks", .scope(.admin), .read, WebhookRoutes.list),
        AdminRoute("GET", "/v1/webhooks/{name:webhook}", .scope(.admin), .read, WebhookRoutes.get),
        AdminRoute("PUT", "/v1/webhooks/{name:webhook}", .scope(.admin), .change, WebhookRoutes.put),
        AdminRoute("DELETE", "/v1/webhooks/{name:webhook}", .scope(.admin), .change, WebhookRoutes.delete),
        AdminRoute(
            "GET", "/v1/webhooks/{name:webhook}/deliveries", .scope(.admin), .read, query: ["limit"],
            WebhookRoutes.deliveries),
        AdminRoute("POST", "/v1/webhooks/{name:webhook}/test", .scope(.admin), .change, WebhookRoutes.test),

        // Admin tokens: every call needs `admin`, a list too (names and scopes are for admins).
        AdminRoute("GET", "/v1/tokens", .scope(.admin), .read, TokenRoutes.list),
        AdminRoute("POST", "/v1/tokens", .scope(.admin), .change, TokenRoutes.create),
        AdminRoute("DELETE", "/v1/tokens/{name:token}", .scope(.admin), .change, TokenRoutes.revoke),
    ]

    /// The routes of each path, in the table's order: a path's methods in the order `Allow` lists them.
    static let paths: [(pattern: PathPattern, routes: [AdminRoute])] = all.reduce(into: []) { paths, route in
        if let index = paths.firstIndex(where: { $0.pattern == route.path }) {
            paths[index].routes.append(route)
        } else {
            paths.append((route.path, [route]))
        }
    }

    /// The path `path` is: the routes of the pattern that matches it and fixes the most of it,
    /// with its variable's value; nil when no pattern matches (404).
    static func resolve(_ path: Substring) -> ResolvedPath? {
        var best: ResolvedPath?
        for (pattern, routes) in paths {
            guard let values = pattern.values(path) else { continue }
            if let best, best.pattern.literalLength >= pattern.literalLength { continue }
            best = ResolvedPath(pattern: pattern, routes: routes, variables: values)
        }
        return best
    }

    /// The effect of `head`: its route's, or one by its method when no route takes it.
    static func effect(of head: RequestHead) -> AdminRoute.Effect {
        resolve(head.path)?.effect(of: head.method) ?? .withoutRoute(method: head.method)
    }
}

/// A request's path resolved to the routes of one pattern.
struct ResolvedPath {
    let pattern: PathPattern
    /// Not empty; all open or all needing a token.
    let routes: [AdminRoute]
    /// The values of the pattern's variables, in order.
    let variables: [String]

    /// The value of the pattern's first variable ("" without one).
    var variable: String { variables.first ?? "" }

    var access: AdminRoute.Access { routes[0].access }

    /// The route for `method`; nil: 405.
    func route(for method: String) -> AdminRoute? { routes.first { $0.method == method } }

    /// The effect of a call with `method`: its route's, or by the method for a 405.
    func effect(of method: String) -> AdminRoute.Effect {
        route(for: method)?.effect ?? .withoutRoute(method: method)
    }

    /// 405 with `Allow`: every method the path has.
    func methodNotAllowed(_ head: RequestHead) -> AdminError {
        AdminError.methodNotAllowed(head, accepts: routes.map(\.method))
    }
}
