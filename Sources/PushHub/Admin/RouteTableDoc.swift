extension AdminRouteTable {
    /// The route table of docs/admin-api.md ("Every route"), one row per route in the table's
    /// order; `AdminRouteTableTests` fails when the page's copy differs, and prints this.
    static var markdown: String {
        var lines = [
            "| method | path | scope | query parameters | a change (audited) |",
            "|---|---|---|---|---|",
        ]
        for route in all {
            let cells = [
                "`\(route.method)`", "`\(route.path)`", route.access.documented, route.query.documented,
                route.effect.documented,
            ]
            lines.append("| " + cells.joined(separator: " | ") + " |")
        }
        return lines.joined(separator: "\n") + "\n"
    }
}

extension AdminRoute.Access {
    fileprivate var documented: String {
        switch self {
        case .open: "none: no token"
        case .scope(let scope): "`\(scope.rawValue)`"
        }
    }
}

extension AdminRoute.Query {
    fileprivate var documented: String {
        switch self {
        case .only(let names) where names.isEmpty: "none"
        case .only(let names): names.map { "`\($0)`" }.joined(separator: ", ")
        case .ignored: "any, ignored"
        }
    }
}

extension AdminRoute.Effect {
    fileprivate var documented: String {
        switch self {
        case .read: "no"
        case .change: "yes"
        case .changeUnlessDryRun(.query): "yes, but not with `?dry_run=true`"
        case .changeUnlessDryRun(.body): "yes, but not with `\"dry_run\": true`"
        }
    }
}
