package io.pushhub.client;

import java.math.BigDecimal;
import java.math.MathContext;
import java.math.RoundingMode;

/**
 * ECMAScript's Number::toString (ECMA-262 §6.1.6.1.20) for finite doubles: what RFC 8785
 * §3.2.2.3 prescribes for numbers in the canonical form.
 *
 * <p>Invariant: {@code Double.parseDouble(format(x)) == x} with the fewest significant digits
 * that do that; among several candidates of that length, the one closest to {@code x} (JDK 17's
 * {@link Double#toString} is not always the shortest, and lays the digits out differently, so it
 * is not used).
 */
final class EcmaNumber {
    /** 2^53: below it every integral double is a safe integer, printed as itself. */
    private static final double SAFE_LIMIT = 0x1p53;

    private EcmaNumber() {}

    /** Whether {@code x} is an integer below 2^53 in magnitude (counts, ids, versions): its digits are the long's. */
    static boolean isSafeInteger(double x) {
        return Math.abs(x) < SAFE_LIMIT && x == Math.rint(x);
    }

    static String format(double x) {
        if (!Double.isFinite(x)) throw new IllegalArgumentException(x + " has no JSON form");
        if (x == 0) return "0"; // -0 too
        if (isSafeInteger(x)) return Long.toString((long) x);
        if (x < 0) return "-" + format(-x);
        return layout(shortest(x));
    }

    /**
     * The decimal with the fewest significant digits that reads back as {@code x} (positive,
     * finite); the closest to x of those.
     */
    private static BigDecimal shortest(double x) {
        BigDecimal exact = new BigDecimal(x);
        // Double.toString's digits read back (its contract) but are not always the fewest (JDK-4511638):
        // start from their count and go down while one digit fewer still reads back. (If p digits
        // read back, so do p + 1: the search can stop at the first count that does not.)
        int precision = significantDigits(Double.toString(x));
        BigDecimal best = closestReadingBack(exact, x, precision);
        if (best == null) return exact.round(new MathContext(17, RoundingMode.HALF_EVEN)); // 17 digits always read back
        for (; precision > 1; precision--) {
            BigDecimal shorter = closestReadingBack(exact, x, precision - 1);
            if (shorter == null) break;
            best = shorter;
        }
        return best;
    }

    /**
     * The decimal of {@code precision} significant digits closest to {@code exact} (= x) that reads
     * back as x, or null. The nearest one, or else the one on the other side of x (the interval
     * that reads back as x is not symmetric at powers of two); any other lies farther out.
     */
    private static BigDecimal closestReadingBack(BigDecimal exact, double x, int precision) {
        BigDecimal nearest = exact.round(new MathContext(precision, RoundingMode.HALF_EVEN));
        if (readsBack(nearest, x)) return nearest;
        BigDecimal down = exact.round(new MathContext(precision, RoundingMode.DOWN));
        BigDecimal other =
                down.compareTo(nearest) == 0 ? exact.round(new MathContext(precision, RoundingMode.UP)) : down;
        return readsBack(other, x) ? other : null;
    }

    /** The significant digits in Double.toString's text ("1.25E-7", "100.0", "0.001"): no leading, trailing zeros. */
    private static int significantDigits(String text) {
        int end = text.indexOf('E');
        if (end < 0) end = text.length();
        int first = 0;
        while (first < end && (text.charAt(first) == '0' || text.charAt(first) == '.')) first++;
        int last = end - 1;
        while (last > first && (text.charAt(last) == '0' || text.charAt(last) == '.')) last--;
        int digits = 0;
        for (int i = first; i <= last; i++) if (text.charAt(i) != '.') digits++;
        return Math.max(digits, 1);
    }

    private static boolean readsBack(BigDecimal decimal, double x) {
        return Double.parseDouble(decimal.toString()) == x;
    }

    /** Lays out {@code value} = digits × 10^(n−k) per ECMA-262 Number::toString, steps 6–12. */
    private static String layout(BigDecimal value) {
        BigDecimal stripped = value.stripTrailingZeros();
        String digits = stripped.unscaledValue().toString();
        int k = digits.length();
        int n = k - stripped.scale();
        StringBuilder out = new StringBuilder(k + 8);
        if (k <= n && n <= 21) {
            out.append(digits);
            for (int i = k; i < n; i++) out.append('0');
        } else if (0 < n && n <= 21) {
            out.append(digits, 0, n).append('.').append(digits, n, k);
        } else if (-6 < n && n <= 0) {
            out.append("0.");
            for (int i = n; i < 0; i++) out.append('0');
            out.append(digits);
        } else {
            int e = n - 1;
            out.append(digits.charAt(0));
            if (k > 1) out.append('.').append(digits, 1, k);
            out.append('e').append(e < 0 ? '-' : '+').append(Math.abs(e));
        }
        return out.toString();
    }
}
