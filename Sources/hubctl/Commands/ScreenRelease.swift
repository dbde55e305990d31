import PushHub

/// `hubctl screen release NAME FILE [--qa-cohort C] [--percent P] [--max-error-rate R] [--min-units N]
/// [--message TEXT] [--dry-run]`: starts a release (DESIGN §15) — FILE becomes the candidate version
/// of NAME, sent to the QA cohort and `percent` of the other units; `hubctl release` follows it.
extension Screen {
    static func release(_ words: [String], _ arguments: Arguments, client: AdminClient, output: Output) -> Int32 {
        guard words.count == 2 else { return usageError("'screen release' takes NAME FILE.") }
        let (name, file) = (words[0], words[1])
        let tree: JSONValue
        switch InputFile.read(file) {
        case .success(let bytes):
            do {
                tree = try JSONReader.parse(bytes)
            } catch {
                return usageError("\(file) is not JSON: \(error)")
            }
        case .failure(let error): return usageError(error.message)
        }
        var body: JSONObject = ["tree": tree]
        let qaCohort = arguments.options["--qa-cohort"]?.last
        if let qaCohort { body["qa_cohort"] = .string(qaCohort) }
        if let text = arguments.options["--percent"]?.last {
            guard let percent = ReleaseCommand.percent(from: text) else {
                return usageError("--percent wants a number from 0 to 100, not '\(text)'.")
            }
            body["percent"] = .number(percent)
        }
        var guardRule = JSONObject()
        if let text = arguments.options["--max-error-rate"]?.last {
            guard let rate = Double(text), rate.isFinite else {
                return usageError("--max-error-rate wants a share from 0 to 1 (0.02 is 2 %), not '\(text)'.")
            }
            guardRule["max_error_rate"] = .number(rate)
        }
        if let text = arguments.options["--min-units"]?.last {
            guard let units = Int(text) else { return usageError("--min-units wants a whole number, not '\(text)'.") }
            guardRule["min_units"] = .number(Double(units))
        }
        if !guardRule.isEmpty { body["guard"] = .object(guardRule) }
        if let message = arguments.options["--message"]?.last { body["message"] = .string(message) }
        let dryRun = arguments.options["--dry-run"] != nil
        let path = ReleaseCommand.releasesPath(name) + (dryRun ? "?dry_run=true" : "")
        return request(client, output, "POST", path, body: JSONWriter.write(.object(body))) { answer in
            guard dryRun else {
                return ReleaseReport.present(
                    answer, output: output,
                    extra: [
                        ("hash", answer["hash"]?.stringValue ?? ""),
                        ReleaseReport.sent(answer),
                    ])
            }
            let base = answer["base_version"]?.intValue ?? 0
            output.table([
                ("screen", name),
                ("change", "v\(base) -> v\(answer["version"]?.intValue ?? base + 1) (dry run: nothing was started)"),
                ("percent", ReleaseReport.percent(answer["percent"]) + (qaCohort.map { " and QA cohort \($0)" } ?? "")),
                (
                    "would expose",
                    "\(answer["would_expose"]?.intValue ?? 0) of \(answer["subscribers"]?.intValue ?? 0) connected subscribers"
                ),
            ])
        }
    }
}
