import Glibc

/// The numbers of an experiment's results (DESIGN §6, docs/assignment.md "Results and their
/// statistics"): pure functions of counts and sums, all at 95 % with the normal quantile `z`.
///
/// Invariants: every interval is a normal approximation except Wilson's (also one, but better
/// behaved near 0 and 1); a rate's interval lies in 0…1; a difference is variant − control;
/// nothing here reads a clock or keeps state. `nil` means "cannot be computed", never zero.
public enum ResultStatistics {
    /// The 0.975 quantile of the standard normal distribution (scipy `norm.ppf(0.975)`).
    public static let z = 1.959963984540054
    /// A sample-ratio mismatch is flagged below this p-value.
    public static let mismatchThreshold = 0.001

    /// A point estimate with its 95 % interval; `interval` is nil when there is too little data.
    public struct Estimate: Equatable, Sendable {
        public var value: Double
        public var interval: ClosedRange<Double>?

        public init(value: Double, interval: ClosedRange<Double>?) {
            self.value = value
            self.interval = interval
        }
    }

    /// Units that did something (`successes`) out of `trials` units. Invariant: 0 ≤ successes ≤ trials.
    public struct Proportion: Equatable, Sendable {
        public var successes: Int
        public var trials: Int

        public init(successes: Int, trials: Int) {
            precondition(0 <= successes && successes <= trials, "a proportion needs 0 ≤ successes ≤ trials")
            self.successes = successes
            self.trials = trials
        }

        /// successes / trials; nil with no trials.
        public var rate: Double? { trials == 0 ? nil : Double(successes) / Double(trials) }
    }

    /// What a mean and its spread need: the count, the sum and the sum of squares of the values.
    /// Invariant: n ≥ 0.
    public struct Moments: Equatable, Sendable {
        public var n: Int
        public var sum: Double
        public var sumOfSquares: Double

        public init(n: Int = 0, sum: Double = 0, sumOfSquares: Double = 0) {
            precondition(n >= 0, "a count of values is never negative")
            self.n = n
            self.sum = sum
            self.sumOfSquares = sumOfSquares
        }

        public init(values: some Sequence<Double>) {
            self.init()
            for value in values { add(value) }
        }

        public mutating func add(_ value: Double) {
            n += 1
            sum += value
            sumOfSquares += value * value
        }

        /// nil when n is 0.
        public var mean: Double? { n == 0 ? nil : sum / Double(n) }

        /// The sample variance (n − 1 in the denominator), `(Σx² − (Σx)²/n) / (n − 1)` clamped at 0
        /// (rounding can make it slightly negative when every value is the same); nil when n < 2.
        public var sampleVariance: Double? {
            guard n >= 2 else { return nil }
            let count = Double(n)
            return max(0, (sumOfSquares - sum * sum / count) / (count - 1))
        }
    }

    /// The result of a Pearson chi-square test of observed counts against the weights' shares.
    public struct SampleRatioCheck: Equatable, Sendable {
        public var chiSquare: Double
        public var degreesOfFreedom: Int
        public var pValue: Double
        /// `pValue < mismatchThreshold`: the split is very unlikely to be the configured one.
        public var mismatch: Bool
    }

    // MARK: Rates

    /// The Wilson score interval of successes / trials; nil with no trials.
    public static func wilson(successes: Int, trials: Int) -> ClosedRange<Double>? {
        guard trials > 0 else { return nil }
        let n = Double(trials), p = Double(successes) / n, z2 = z * z
        let denominator = 1 + z2 / n
        let center = (p + z2 / (2 * n)) / denominator
        let half = z * (p * (1 - p) / n + z2 / (4 * n * n)).squareRoot() / denominator
        return max(0, center - half)...min(1, center + half)
    }

    /// The rate with its Wilson interval; nil with no trials.
    public static func rate(_ proportion: Proportion) -> Estimate? {
        guard let rate = proportion.rate else { return nil }
        return Estimate(value: rate, interval: wilson(successes: proportion.successes, trials: proportion.trials))
    }

    /// variant − control with its Wald interval, `d ± z·√(p₁(1−p₁)/n₁ + p₂(1−p₂)/n₂)`; nil when
    /// either has no trials.
    public static func rateDifference(control: Proportion, variant: Proportion) -> Estimate? {
        guard let p1 = control.rate, let p2 = variant.rate else { return nil }
        let variance = p1 * (1 - p1) / Double(control.trials) + p2 * (1 - p2) / Double(variant.trials)
        return Estimate(value: p2 - p1, interval: normalInterval(p2 - p1, standardError: variance.squareRoot()))
    }

    // MARK: Means

    /// The mean's normal interval, `mean ± z·s/√n` with the sample standard deviation s; nil when n < 2.
    public static func meanInterval(n: Int, sum: Double, sumOfSquares: Double) -> ClosedRange<Double>? {
        mean(Moments(n: n, sum: sum, sumOfSquares: sumOfSquares))?.interval
    }

    /// The mean with its normal interval (nil when n < 2); nil when n is 0.
    public static func mean(_ moments: Moments) -> Estimate? {
        guard let mean = moments.mean else { return nil }
        let interval = moments.sampleVariance.map { variance in
            normalInterval(mean, standardError: (variance / Double(moments.n)).squareRoot())
        }
        return Estimate(value: mean, interval: interval)
    }

    /// variant − control with Welch's standard error `√(s₁²/n₁ + s₂²/n₂)` and the normal quantile
    /// (no t distribution); nil when either is empty, the interval nil when either has fewer than 2.
    public static func meanDifference(control: Moments, variant: Moments) -> Estimate? {
        guard let m1 = control.mean, let m2 = variant.mean else { return nil }
        var interval: ClosedRange<Double>?
        if let v1 = control.sampleVariance, let v2 = variant.sampleVariance {
            let standardError = (v1 / Double(control.n) + v2 / Double(variant.n)).squareRoot()
            interval = normalInterval(m2 - m1, standardError: standardError)
        }
        return Estimate(value: m2 - m1, interval: interval)
    }

    private static func normalInterval(_ center: Double, standardError: Double) -> ClosedRange<Double> {
        (center - z * standardError)...(center + z * standardError)
    }

    // MARK: Sample ratio mismatch

    /// Pearson's chi-square of `observed[i]` against `total · weights[i] / Σweights`, with
    /// k − 1 degrees of freedom. Variants whose weight is not positive are left out (with their
    /// counts); nil with fewer than two left or no units among them.
    public static func sampleRatioMismatch(observed: [Int], weights: [Int]) -> SampleRatioCheck? {
        precondition(observed.count == weights.count, "one observed count per weight")
        let kept = zip(observed, weights).filter { $0.1 > 0 }
        let total = Double(kept.reduce(0) { $0 + $1.0 }), weightTotal = Double(kept.reduce(0) { $0 + $1.1 })
        guard kept.count >= 2, total > 0 else { return nil }
        var chiSquare = 0.0
        for (count, weight) in kept {
            let expected = total * Double(weight) / weightTotal
            let deviation = Double(count) - expected
            chiSquare += deviation * deviation / expected
        }
        let pValue = chiSquareSurvival(chiSquare, degreesOfFreedom: kept.count - 1)
        return SampleRatioCheck(
            chiSquare: chiSquare, degreesOfFreedom: kept.count - 1, pValue: pValue, mismatch: pValue < mismatchThreshold
        )
    }

    /// P(X ≥ x) for X chi-square distributed with `degreesOfFreedom` (≥ 1): Q(df/2, x/2).
    public static func chiSquareSurvival(_ x: Double, degreesOfFreedom: Int) -> Double {
        precondition(degreesOfFreedom >= 1, "chi-square needs at least one degree of freedom")
        return regularizedUpperGamma(Double(degreesOfFreedom) / 2, x / 2)
    }

    /// Q(a, x) = Γ(a, x) / Γ(a), for a > 0 and x ≥ 0 (Numerical Recipes §6.2): the series of P
    /// for x < a + 1 (then Q = 1 − P, which is not small there), else the continued fraction of
    /// Q by Lentz's method; both until a term changes the result by at most one ulp. Relative
    /// error about 1e-15·(1 + a), from the prefactor's exponent; underflows to 0 for huge x.
    public static func regularizedUpperGamma(_ a: Double, _ x: Double) -> Double {
        precondition(a > 0 && x >= 0, "Q(a, x) needs a > 0 and x ≥ 0")
        if x == 0 { return 1 }
        if x == .infinity { return 0 }
        var sign: Int32 = 0
        let logPrefactor = -x + a * log(x) - lgamma_r(a, &sign)  // log(e^−x · x^a / Γ(a))
        let epsilon = Double.ulpOfOne, tiny = Double.leastNormalMagnitude / Double.ulpOfOne
        if x < a + 1 {
            var term = 1 / a, sum = term, denominator = a
            for _ in 0..<100_000 {
                denominator += 1
                term *= x / denominator
                sum += term
                if abs(term) <= abs(sum) * epsilon { break }
            }
            return max(0, 1 - sum * exp(logPrefactor))
        }
        var b = x + 1 - a, c = 1 / tiny, d = 1 / b, fraction = d
        for i in 1...100_000 {
            let an = -Double(i) * (Double(i) - a)
            b += 2
            d = an * d + b
            if abs(d) < tiny { d = tiny }
            c = b + an / c
            if abs(c) < tiny { c = tiny }
            d = 1 / d
            let step = d * c
            fraction *= step
            if abs(step - 1) <= epsilon { break }
        }
        return exp(logPrefactor) * fraction
    }
}
