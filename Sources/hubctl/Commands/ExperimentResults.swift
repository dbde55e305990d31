import Foundation
import PushHub

/// How `hubctl experiment results KEY` reads `GET /v1/experiments/{key}/results` (DESIGN §6):
/// a title line (status, since when it counts, where results are kept), the served and
/// confirmed units per variant, the sample-ratio check, and per goal event a table of rates and
/// mean values with their 95 % intervals and their differences to the control.
///
/// ```
/// layout (running), counting since 2026-11-25 19:46:40 UTC, kept in the data dir
/// variant  served  confirmed
/// a        100     97
/// b        103     99
///
/// SRM: ok (chi-square 0.04, p = 0.84): served 100:103 fits the weights 1:1
///
/// goal: purchase
/// variant  units  rate (95% CI)         mean value (95% CI)  rate vs a (95% CI)     mean value vs a (95% CI)
/// a        33     33.0% [24.6%, 42.7%]  1.20 [0.80, 1.60]    control                control
/// b        40     38.8% [29.9%, 48.5%]  1.50 [1.10, 1.90]    +5.8 pp [-7.5, +19.1]  +0.30 [-0.27, +0.87]
/// ```
///
/// The first table is the one hubs before issue 26 answered (served and confirmed alone); a
/// member such a hub does not send is left out, never shown as zero.
enum ExperimentResults {
    static func present(_ key: String, _ answer: JSONValue, output: Output) {
        output.print(title(key, answer))
        let variants = answer["variants"]?.arrayValue ?? []
        output.columns(
            [["variant", "served", "confirmed"]]
                + variants.map { v in
                    [v["variant"]?.stringValue ?? "", count(v["served"]), count(v["confirmed"])]
                })
        if let srm = answer["srm"] {
            output.print("")
            output.print(sampleRatio(srm, variants))
        }
        guard let goals = answer["goals"]?.arrayValue else { return }
        let control = answer["control"]?.stringValue ?? variants.first?["variant"]?.stringValue ?? "control"
        if goals.isEmpty {
            output.print("")
            output.print("goals: none reported yet (apps report them with track(event, value))")
        }
        for goal in goals {
            output.print("")
            output.print("goal: \(goal["event"]?.stringValue ?? "")")
            let header = [
                "variant", "units", "rate (95% CI)", "mean value (95% CI)", "rate vs \(control) (95% CI)",
                "mean value vs \(control) (95% CI)",
            ]
            output.columns([header] + (goal["variants"]?.arrayValue ?? []).map { row(of: $0, control: control) })
        }
    }

    /// `KEY (status), counting since <UTC time>, kept in <where>`.
    static func title(_ key: String, _ answer: JSONValue) -> String {
        var title = "\(key) (\(answer["status"]?.stringValue ?? ""))"
        switch answer["since"] {
        case .number(let milliseconds)?: title += ", counting since " + utc(milliseconds)
        case .null?: title += ", nothing counted yet"
        default: break
        }
        switch answer["kept"]?.stringValue {
        case "data-dir"?: title += ", kept in the data dir"
        case "redis"?: title += ", kept in Redis"
        case "memory"?: title += ", kept in memory only (a restart loses them)"
        case let other?: title += ", kept in \(other)"
        case nil: break
        }
        return title
    }

    /// `2026-11-25 19:46:40 UTC`.
    static func utc(_ milliseconds: Double) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss"
        return formatter.string(from: Date(timeIntervalSince1970: milliseconds / 1000)) + " UTC"
    }

    /// The sample-ratio-mismatch line: a mismatch is a WARNING that says what it means.
    static func sampleRatio(_ srm: JSONValue, _ variants: [JSONValue]) -> String {
        guard srm != .null, let chiSquare = srm["chi_square"]?.numberValue, let p = srm["p_value"]?.numberValue else {
            return "SRM: not checked (it needs served units and at least two variants of weight above 0)"
        }
        let weighted = variants.filter { ($0["weight"]?.numberValue ?? 1) > 0 }
        let served = weighted.map { count($0["served"]) }.joined(separator: ":")
        let weights = weighted.map { $0["weight"].map { JSONWriter.string($0) } ?? "?" }.joined(separator: ":")
        let statistic = "chi-square \(String(format: "%.2f", chiSquare)), p \(pValue(p))"
        guard srm["mismatch"] == .bool(true) else {
            return "SRM: ok (\(statistic)): served \(served) fits the weights \(weights)"
        }
        return "WARNING: sample ratio mismatch (\(statistic), below 0.001): served \(served) does not fit the weights "
            + "\(weights). Assignment or exposure counting is skewed; do not trust the goal results until you know why."
    }

    /// `= 0.84`, `= 0.0012`, `< 0.0001`.
    static func pValue(_ p: Double) -> String {
        if p < 0.0001 { return "< 0.0001" }
        return "= " + String(format: p < 0.01 ? "%.4f" : "%.2f", p)
    }

    private static func row(of v: JSONValue, control: String) -> [String] {
        let isControl = v["variant"]?.stringValue == control
        return [
            v["variant"]?.stringValue ?? "", count(v["units"]),
            estimate(v["rate"], v["rate_ci"], percent: true),
            estimate(v["value_mean"], v["value_ci"], percent: false),
            isControl ? "control" : difference(v["diff_rate"], v["diff_rate_ci"], percent: true),
            isControl ? "control" : difference(v["diff_value"], v["diff_value_ci"], percent: false),
        ]
    }

    private static func count(_ value: JSONValue?) -> String { value?.intValue.map(String.init) ?? "–" }

    /// `33.0% [24.6%, 42.7%]` or `1.20 [0.80, 1.60]`; `–` when there is nothing to estimate from.
    static func estimate(_ value: JSONValue?, _ interval: JSONValue?, percent: Bool) -> String {
        guard let x = value?.numberValue else { return "–" }
        let scale = percent ? 100.0 : 1.0
        let digits = decimals(x * scale, percent: percent)
        let point = String(format: "%.\(digits)f", x * scale) + (percent ? "%" : "")
        return point + range(interval, scale: scale, digits: digits, signed: false, unit: percent ? "%" : "")
    }

    /// `+5.8 pp [-7.5, +19.1]` (percentage points) or `+0.30 [-0.27, +0.87]`.
    static func difference(_ value: JSONValue?, _ interval: JSONValue?, percent: Bool) -> String {
        guard let x = value?.numberValue else { return "–" }
        let scale = percent ? 100.0 : 1.0
        let digits = decimals(x * scale, percent: percent)
        let point = String(format: "%+.\(digits)f", x * scale) + (percent ? " pp" : "")
        return point + range(interval, scale: scale, digits: digits, signed: true, unit: "")
    }

    private static func range(_ interval: JSONValue?, scale: Double, digits: Int, signed: Bool, unit: String) -> String
    {
        guard let bounds = interval?.arrayValue, bounds.count == 2, let low = bounds[0].numberValue,
            let high = bounds[1].numberValue
        else { return "" }
        let format = signed ? "%+.\(digits)f" : "%.\(digits)f"
        return " [" + String(format: format, low * scale) + unit + ", " + String(format: format, high * scale) + unit
            + "]"
    }

    /// Enough decimals to read a value of this size: a rate in percent to 0.1 (0.01 below 1 %),
    /// a mean to three significant digits or so.
    private static func decimals(_ x: Double, percent: Bool) -> Int {
        let size = abs(x)
        if percent { return size < 1 && size > 0 ? 2 : 1 }
        switch size {
        case 1000...: return 0
        case 100..<1000: return 1
        case 0.01..<100, 0: return 2
        default: return 4
        }
    }
}
