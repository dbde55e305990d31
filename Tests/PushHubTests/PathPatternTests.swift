import Testing

@testable import PushHub

/// Which route a path is (`PathPattern`, `AdminRouteTable.resolve`): screen names hold `/` and
/// may be percent-encoded, an action suffix names the action, the most specific pattern wins.
@Suite struct PathPatternTests {
    /// The pattern a path resolves to, and its variable's value (nil: no route, a 404).
    func resolved(_ path: String) -> (String, String)? {
        AdminRouteTable.resolve(path[...]).map { ($0.pattern.description, $0.variable) }
    }

    @Test("a pattern reads its variable between its literal parts, and shows as the docs write it")
    func parsing() {
        let pattern = PathPattern("/v1/screens/{name:screen}/history")
        #expect(pattern.prefix == "/v1/screens/" && pattern.suffix == "/history" && pattern.variable == .screen)
        #expect(pattern.description == "/v1/screens/{name}/history")
        #expect(pattern.match("/v1/screens/a/b/history") == "a/b")
        #expect(pattern.match("/v1/screens/a/b") == nil)
        #expect(PathPattern("/v1/stats").match("/v1/stats") == "")
        #expect(PathPattern("/v1/stats").match("/v1/stats/") == nil)
    }

    @Test("a screen name holds /; a path ending in /history, /rollback or /diff is that action of the name before it")
    func screenNames() {
        #expect(resolved("/v1/screens/news/home")! == ("/v1/screens/{name}", "news/home"))
        #expect(resolved("/v1/screens/news/home/history")! == ("/v1/screens/{name}/history", "news/home"))
        #expect(resolved("/v1/screens/home/rollback")! == ("/v1/screens/{name}/rollback", "home"))
        #expect(resolved("/v1/screens/home/diff")! == ("/v1/screens/{name}/diff", "home"))
        // Only the last suffix is the action (it used to strip them all: this was the diff of home).
        #expect(resolved("/v1/screens/home/diff/history")! == ("/v1/screens/{name}/history", "home/diff"))
        #expect(resolved("/v1/screens/")! == ("/v1/screens/{name}", ""))
        #expect(resolved("/v1/screensx") == nil)
    }

    @Test("a release's paths read the screen name, then the release id as one segment after the last /releases/")
    func releasePaths() {
        func resolvedAll(_ path: String) -> (String, [String])? {
            AdminRouteTable.resolve(path[...]).map { ($0.pattern.description, $0.variables) }
        }
        #expect(resolvedAll("/v1/screens/news/home/releases")! == ("/v1/screens/{name}/releases", ["news/home"]))
        #expect(
            resolvedAll("/v1/screens/news/home/releases/r-4")! == ("/v1/screens/{name}/releases/{id}", ["news/home", "r-4"]))
        #expect(
            resolvedAll("/v1/screens/home/releases/r-4/halt")!
                == ("/v1/screens/{name}/releases/{id}/halt", ["home", "r-4"]))
        #expect(
            resolvedAll("/v1/screens/home%2Freleases%2Fr-4%2Fpercent")!
                == ("/v1/screens/{name}/releases/{id}/percent", ["home", "r-4"]))
        // An id is one segment: this is the screen "home/releases/r-4/x", which may not be a name (422).
        #expect(resolvedAll("/v1/screens/home/releases/r-4/x")! == ("/v1/screens/{name}", ["home/releases/r-4/x"]))
        #expect(ScreenName.validationError("home/releases/r-4/x") != nil)
        #expect(ScreenName.validationError("home/releases") != nil && ScreenName.validationError("home/diff") != nil)
        #expect(ScreenName.validationError("releases") == nil && ScreenName.validationError("home/releases-2") == nil)
        let pattern = PathPattern("/v1/screens/{name:screen}/releases/{id:release}/halt")
        #expect(pattern.description == "/v1/screens/{name}/releases/{id}/halt")
        #expect(pattern.values("/v1/screens/a/releases/r-1/halt") == ["a", "r-1"])
        #expect(pattern.values("/v1/screens/a/releases//halt") == ["a", ""])
        #expect(pattern.values("/v1/screens/a/release/r-1/halt") == nil)
    }

    @Test("a screen name may be percent-encoded, its action suffix too")
    func percentEncodedScreenNames() {
        #expect(resolved("/v1/screens/news%2Fhome")! == ("/v1/screens/{name}", "news/home"))
        #expect(resolved("/v1/screens/home%2Fhistory")! == ("/v1/screens/{name}/history", "home"))
        #expect(resolved("/v1/screens/home%2fdiff")! == ("/v1/screens/{name}/diff", "home"))
    }

    @Test("cohort names, token names and sync ids are the rest of the path; an experiment key is one segment")
    func otherVariables() {
        #expect(resolved("/v1/cohorts/beta/users")! == ("/v1/cohorts/{name}/users", "beta"))
        #expect(resolved("/v1/cohorts/a/b")! == ("/v1/cohorts/{name}", "a/b"))  // then a 422: not a cohort name
        #expect(resolved("/v1/tokens/a/b")! == ("/v1/tokens/{name}", "a/b"))
        #expect(resolved("/v1/syncs/")! == ("/v1/syncs/{id}", ""))
        #expect(resolved("/v1/experiments/exp/assignment")! == ("/v1/experiments/{key}/assignment", "exp"))
        #expect(resolved("/v1/experiments/exp/other") == nil)
        #expect(resolved("/v1/experiments/exp/") == nil)
        #expect(resolved("/v1/experiments/")! == ("/v1/experiments/{key}", ""))  // then a 422
    }

    @Test("the console's paths and /healthz are open; any other path needs a token")
    func openPaths() {
        for path in ["/healthz", "/console", "/console/", "/console/app.js", "/console/a/b"] {
            #expect(AdminRouteTable.resolve(path[...])?.access == .open, "\(path)")
        }
        for path in ["/consoles", "/healthz/", "/", "/v1/nothing"] {
            #expect(AdminRouteTable.resolve(path[...]) == nil, "\(path)")
        }
        #expect(AdminRouteTable.resolve("/v1/stats")?.access == .scope(.read))
    }
}
