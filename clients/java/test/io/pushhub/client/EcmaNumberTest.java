package io.pushhub.client;

import static io.pushhub.client.Expect.equal;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/** ECMAScript's Number::toString: known answers, and 100,000 doubles against node's own. */
public final class EcmaNumberTest {
    private EcmaNumberTest() {}

    /** How many doubles the comparison with node checks. */
    static final int NODE_SAMPLES = 100_000;

    public static void testKnownAnswers() {
        String[][] cases = {
            {"0", "0"}, {"-0.0", "0"}, {"1", "1"}, {"-1", "-1"}, {"0.1", "0.1"}, {"0.2", "0.2"},
            {"0.30000000000000004", "0.30000000000000004"}, {"1e21", "1e+21"}, {"1e20", "100000000000000000000"},
            {"999999999999999900000", "999999999999999900000"}, {"1e-6", "0.000001"}, {"1e-7", "1e-7"},
            {"1.5e-7", "1.5e-7"}, {"123456.789", "123456.789"}, {"5e-324", "5e-324"}, {"-5e-324", "-5e-324"},
            {"1.7976931348623157e308", "1.7976931348623157e+308"}, {"2.2250738585072014e-308", "2.2250738585072014e-308"},
            {"9007199254740991", "9007199254740991"}, {"9007199254740992", "9007199254740992"},
            {"9007199254740994", "9007199254740994"}, {"18014398509481984", "18014398509481984"},
            {"4.35", "4.35"}, {"0.000001234", "0.000001234"}, {"1e23", "1e+23"}, {"2e23", "2e+23"},
            {"8.41e21", "8.41e+21"}, {"5e-7", "5e-7"}, {"1.2345678901234567e-5", "0.000012345678901234568"},
            {"333333333.33333329", "333333333.3333333"}, {"1E30", "1e+30"}, {"4.50", "4.5"}, {"2e-3", "0.002"},
            {"0.000000000000000000000000001", "1e-27"}, {"-1.5e300", "-1.5e+300"}, {"4.940656458412465e-324", "5e-324"},
            {"1.0000000000000002", "1.0000000000000002"}, {"123e-20", "1.23e-18"},
            // JDK 17's Double.toString gives one digit more than needed for these.
            {"1.6970127485482881E19", "16970127485482880000"}, {"4.2661722296074304E16", "42661722296074300"},
            {"6.4588722138028728E16", "64588722138028730"},
            // RFC 8785 Appendix B (hex bits → text).
            {"4.9406564584124654e-324", "5e-324"}, {"-1.7976931348623157e308", "-1.7976931348623157e+308"},
            {"9.999999999999997e22", "9.999999999999997e+22"}, {"1e23", "1e+23"}, {"1.0000000000000001e23", "1.0000000000000001e+23"},
            {"295147905179352830000", "295147905179352830000"}, {"1e21", "1e+21"}, {"999999999999999700000", "999999999999999700000"},
            {"9.999999999999997e-7", "9.999999999999997e-7"}, {"0.000001", "0.000001"},
        };
        for (String[] c : cases) equal(c[0], c[1], EcmaNumber.format(Double.parseDouble(c[0])));
    }

    public static void testEveryFormReadsBack() {
        SplittableRandom random = new SplittableRandom(7);
        for (int i = 0; i < 20_000; i++) {
            double x = randomDouble(random, i);
            String text = EcmaNumber.format(x);
            if (Double.parseDouble(text) != x) throw new AssertionError(text + " does not read back as " + x);
        }
    }

    /**
     * Compares {@link EcmaNumber#format} with node's {@code String(x)} on {@link #NODE_SAMPLES}
     * doubles of several shapes (one node process, one batch); skipped when node is absent.
     */
    public static void testAgreesWithNode() throws Exception {
        List<Double> samples = new ArrayList<>(NODE_SAMPLES);
        SplittableRandom random = new SplittableRandom(2026);
        for (int i = 0; i < NODE_SAMPLES; i++) samples.add(randomDouble(random, i));
        List<String> expected = nodeStrings(samples);
        if (expected == null) {
            System.out.println("      (skipped: node is not installed)");
            return;
        }
        int mismatches = 0;
        StringBuilder first = new StringBuilder();
        for (int i = 0; i < samples.size(); i++) {
            String ours = EcmaNumber.format(samples.get(i));
            if (!ours.equals(expected.get(i))) {
                if (mismatches++ < 5) {
                    first.append("\n  bits ").append(Long.toHexString(Double.doubleToRawLongBits(samples.get(i))))
                            .append(": node ").append(expected.get(i)).append(", ours ").append(ours);
                }
            }
        }
        if (mismatches > 0) throw new AssertionError(mismatches + " of " + samples.size() + " differ from node:" + first);
        System.out.println("      (" + samples.size() + " doubles agree with node's String(x))");
    }

    /** Shapes that stress the formatter, in turn: any bits, subnormals, near 2^53, near 1e21 and 1e-7, short decimals. */
    static double randomDouble(SplittableRandom random, int i) {
        double x;
        switch (i % 8) {
            case 0: case 1: // any finite double
                do x = Double.longBitsToDouble(random.nextLong()); while (!Double.isFinite(x));
                return x;
            case 2: // subnormal
                return Double.longBitsToDouble(random.nextLong(1L, 1L << 52)) * (random.nextBoolean() ? 1 : -1);
            case 3: // integers around 2^53
                return (double) (9007199254740992L + random.nextLong(-5000, 5000)) * (random.nextBoolean() ? 1 : -1);
            case 4: // around 1e21, where the exponent form starts
                return Math.nextUp(1e21) + (random.nextLong(-20000, 20000) * 65536.0);
            case 5: // around 1e-6 / 1e-7, the other boundary
                return Double.longBitsToDouble(Double.doubleToRawLongBits(1e-6) + random.nextLong(-2_000_000, 2_000_000));
            case 6: // short decimals, as people write them
                return random.nextInt(-1_000_000, 1_000_000) / Math.pow(10, random.nextInt(0, 12));
            default: // a random magnitude, a random mantissa
                return (random.nextDouble() + 1) * Math.pow(10, random.nextInt(-330, 308));
        }
    }

    /** node's {@code String(x)} for each sample (sent as raw bits), or null when node cannot be started. */
    private static List<String> nodeStrings(List<Double> samples) throws IOException, InterruptedException {
        String script = "const lines = require('fs').readFileSync(0, 'utf8').split('\\n').filter(Boolean);"
                + "const view = new DataView(new ArrayBuffer(8)); const out = [];"
                + "for (const l of lines) { view.setBigUint64(0, BigInt('0x' + l)); out.push(String(view.getFloat64(0))); }"
                + "process.stdout.write(out.join('\\n') + '\\n');";
        Process node;
        try {
            node = new ProcessBuilder("node", "-e", script).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        } catch (IOException notInstalled) {
            return null;
        }
        CompletableFuture<List<String>> lines = CompletableFuture.supplyAsync(() -> {
            List<String> read = new ArrayList<>(samples.size());
            try (BufferedReader in = new BufferedReader(new InputStreamReader(node.getInputStream(), StandardCharsets.UTF_8))) {
                for (String line = in.readLine(); line != null; line = in.readLine()) read.add(line);
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
            return read;
        });
        try (Writer out = new OutputStreamWriter(node.getOutputStream(), StandardCharsets.US_ASCII)) {
            for (double x : samples) out.write(Long.toHexString(Double.doubleToRawLongBits(x)) + "\n");
        }
        if (!node.waitFor(60, TimeUnit.SECONDS)) {
            node.destroy();
            throw new AssertionError("node did not finish in 60 s");
        }
        List<String> result = lines.join();
        equal("node answered every sample", samples.size(), result.size());
        return result;
    }
}
