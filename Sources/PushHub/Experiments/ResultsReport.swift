/// The answer of `GET /v1/experiments/{key}/results` (DESIGN §6 "Goals and results";
/// docs/assignment.md says what each number is): the current phase's counts per variant, the
/// sample-ratio check of the served counts against the weights, and per goal each variant's
/// conversion rate and mean value with their 95 % intervals and their differences to control
/// (the first variant).
enum ResultsReport {
    /// - Parameters:
    ///   - phase: the tally of the experiment's current salt (nil: nothing counted yet).
    ///   - kept: where results live ("data-dir", "redis", "memory").
    static func json(_ experiment: Experiment, phase: ResultsTally.Phase?, kept: String) -> JSONValue {
        let variants = experiment.variants
        let counts = variants.map { phase?.counts(of: $0.key) ?? ResultsTally.VariantCounts() }
        let rows = zip(variants, counts).map { variant, count -> JSONValue in
            .object([
                "variant": .string(variant.key), "weight": .number(Double(variant.weight)),
                "served": .number(Double(count.served)), "confirmed": .number(Double(count.confirmed)),
            ])
        }
        let srm = ResultStatistics.sampleRatioMismatch(observed: counts.map(\.served), weights: variants.map(\.weight))
        let goals = (phase?.goalNames ?? []).sorted().map { goal -> JSONValue in
            .object(["event": .string(goal), "variants": .array(goalRows(goal, experiment, counts, phase))])
        }
        return .object([
            "key": .string(experiment.key), "status": .string(experiment.status.rawValue),
            "salt": .string(experiment.salt), "since": phase.map { .number(Double($0.since)) } ?? .null,
            "kept": .string(kept), "control": .string(variants[0].key), "variants": .array(rows),
            "srm": srm.map {
                .object(["chi_square": number($0.chiSquare), "p_value": number($0.pValue), "mismatch": .bool($0.mismatch)])
            } ?? .null,
            "goals": .array(goals),
            "goal_events_dropped": .number(Double(phase?.droppedGoalEvents ?? 0)),
        ])
    }

    /// One goal's row per variant; the control's differences are null.
    private static func goalRows(
        _ goal: String, _ experiment: Experiment, _ counts: [ResultsTally.VariantCounts], _ phase: ResultsTally.Phase?
    ) -> [JSONValue] {
        let measures = zip(experiment.variants, counts).map { variant, count in
            let sums = phase?.goal(goal, in: variant.key) ?? ResultsTally.GoalSums()
            // Units without the event count with a value of 0: they add nothing to either sum.
            return (
                units: sums.units,
                proportion: ResultStatistics.Proportion(successes: sums.units, trials: count.served),
                moments: ResultStatistics.Moments(n: count.served, sum: sums.sum, sumOfSquares: sums.sumOfSquares)
            )
        }
        let control = measures[0]
        return zip(experiment.variants, measures).enumerated().map { index, pair -> JSONValue in
            let (variant, measure) = pair
            let rate = ResultStatistics.rate(measure.proportion)
            let mean = ResultStatistics.mean(measure.moments)
            let rateDifference =
                index == 0 ? nil : ResultStatistics.rateDifference(control: control.proportion, variant: measure.proportion)
            let meanDifference =
                index == 0 ? nil : ResultStatistics.meanDifference(control: control.moments, variant: measure.moments)
            return .object([
                "variant": .string(variant.key), "units": .number(Double(measure.units)),
                "rate": number(rate?.value), "rate_ci": interval(rate?.interval),
                "value_mean": number(mean?.value), "value_ci": interval(mean?.interval),
                "diff_rate": number(rateDifference?.value), "diff_rate_ci": interval(rateDifference?.interval),
                "diff_value": number(meanDifference?.value), "diff_value_ci": interval(meanDifference?.interval),
            ])
        }
    }

    /// Values are bounded (`ClientMessage.maxTrackValue`), so sums stay finite; a number that is
    /// not is `null` all the same, never a trap in the JSON writer.
    private static func number(_ value: Double?) -> JSONValue {
        guard let value, value.isFinite else { return .null }
        return .number(value)
    }

    private static func interval(_ range: ClosedRange<Double>?) -> JSONValue {
        guard let range, range.lowerBound.isFinite, range.upperBound.isFinite else { return .null }
        return .array([.number(range.lowerBound), .number(range.upperBound)])
    }
}
