import PushHub

/// A release (DESIGN §15) for people: its status, versions, percent, health against its guard,
/// the halt, its steps and recent render errors; and its one-line form for `release list`.
/// Reads the release object of the admin API (docs/admin-api.md); a member it lacks shows as `-`.
enum ReleaseReport {
    /// The whole release: `key: value` rows (then `extra`, what the command adds: what was sent),
    /// then the steps, the errors by component and the recent errors as indented columns.
    static func present(_ release: JSONValue, output: Output, extra: [(String, String)] = []) {
        let health = release["health"]
        let guardRule = release["guard"]
        var rows: [(String, String)] = [
            ("release", release["release"]?.stringValue ?? "-"), ("screen", release["screen"]?.stringValue ?? "-"),
            ("status", release["status"]?.stringValue ?? "-"), ("versions", versions(release)),
            (
                "percent",
                percent(release["percent"]) + (release["qa_cohort"]?.stringValue.map { " and QA cohort \($0)" } ?? "")
            ),
            ("exposed", count(health?["exposed"])), ("rendered", count(health?["rendered"])),
            ("errored", count(health?["errored"])),
            ("error rate", errorRate(health)),
            (
                "guard",
                "halts above \(rate(guardRule?["max_error_rate"])) once \(count(guardRule?["min_units"])) units reported"
            ),
        ]
        if let halt = release["halt"], halt != .null {
            let who = halt["by"]?.stringValue ?? "-"
            rows.append(("halted", "\(time(halt["at"])) by \(who): \(halt["reason"]?.stringValue ?? "")"))
        }
        if let revert = release["revert_version"]?.intValue {
            rows.append(("reverted", "v\(revert) has the base tree again (sent to the exposed clients)"))
        }
        if let message = release["message"]?.stringValue { rows.append(("message", message)) }
        rows.append(("started", "\(time(release["created_at"])) by \(release["author"]?.stringValue ?? "-")"))
        output.table(rows + extra)
        let steps = release["steps"]?.arrayValue ?? []
        if !steps.isEmpty {
            output.print("steps:")
            output.columns(steps.map(stepRow), indent: "  ")
        }
        let byComponent = health?["errors_by_component"]?.objectValue ?? JSONObject()
        if !byComponent.isEmpty {
            output.print("errors by component:")
            output.columns(byComponent.map { [$0.key, count($0.value)] }, indent: "  ")
        }
        let recent = health?["recent_errors"]?.arrayValue ?? []
        if !recent.isEmpty {
            output.print("recent errors:")
            output.columns(
                recent.map { error in
                    [
                        time(error["at"]), error["unit"]?.stringValue ?? "-", error["component"]?.stringValue ?? "-",
                        error["message"]?.stringValue ?? "",
                    ]
                }, indent: "  ")
        }
    }

    /// One `release list` line: id, status, versions, percent, exposed, errors, when it started.
    static func listRow(_ release: JSONValue) -> [String] {
        [
            release["release"]?.stringValue ?? "-", release["status"]?.stringValue ?? "-", versions(release),
            percent(release["percent"]), "exposed \(count(release["health"]?["exposed"]))",
            "error rate \(errorRate(release["health"]))", time(release["created_at"]),
        ]
    }

    /// The `sent` row of an answer: `5 connected clients`, and `(unchanged: …)` when the percent
    /// asked for is the one the release has.
    static func sent(_ answer: JSONValue) -> (String, String) {
        let count = answer["sent"]?.intValue ?? 0
        let unchanged = answer["unchanged"] == .bool(true) ? " (unchanged: the release has that percent already)" : ""
        return ("sent", "\(count) connected client\(count == 1 ? "" : "s")\(unchanged)")
    }

    /// `10 %`, `0.5 %`: the hub's number as it wrote it.
    static func percent(_ value: JSONValue?) -> String {
        guard let number = value?.numberValue else { return "-" }
        return JSONWriter.formatNumber(number) + " %"
    }

    /// A share (0…1) as a percent with at most two decimals: 0.0291 → `2.91 %`.
    static func rate(_ value: JSONValue?) -> String {
        guard let share = value?.numberValue else { return "-" }
        return JSONWriter.formatNumber((share * 10000).rounded() / 100) + " %"
    }

    /// `2.91 % (3 of 103 reported)`.
    static func errorRate(_ health: JSONValue?) -> String {
        "\(rate(health?["error_rate"])) (\(count(health?["errored"])) of \(count(health?["reported"])) reported)"
    }

    private static func versions(_ release: JSONValue) -> String {
        "v\(count(release["base_version"])) -> v\(count(release["version"]))"
    }

    private static func stepRow(_ step: JSONValue) -> [String] {
        var detail = ""
        if let percent = step["percent"], percent != .null { detail = Self.percent(percent) }
        if let reason = step["reason"]?.stringValue { detail = reason }
        return [time(step["at"]), step["actor"]?.stringValue ?? "-", step["action"]?.stringValue ?? "-", detail]
    }

    private static func count(_ value: JSONValue?) -> String { value?.intValue.map(String.init) ?? "-" }

    private static func time(_ value: JSONValue?) -> String { value?.intValue.map(Screen.time) ?? "-" }
}
