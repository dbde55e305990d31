package io.pushhub.client;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Random trees written canonically here and by Python's {@code rfc8785} package (the repository's
 * {@code .venv}), one batch through one process; skipped when that Python is absent.
 */
public final class Rfc8785CrossCheckTest {
    private Rfc8785CrossCheckTest() {}

    static final int TREES = 2_000;

    /** Reads JSON lines (integers as floats, as a double-based parser does) and writes each one's RFC 8785 form. */
    private static final String SCRIPT = "import sys, json, rfc8785\n"
            + "out = [rfc8785.dumps(json.loads(line, parse_int=float)) for line in sys.stdin.buffer.read().decode().split('\\n') if line]\n"
            + "sys.stdout.buffer.write(b'\\n'.join(out) + b'\\n')\n";

    public static void testRandomTreesAgreeWithPythonRfc8785() throws Exception {
        Path python = RepoRoot.get().resolve(".venv/bin/python");
        if (!Files.isExecutable(python)) {
            System.out.println("      (skipped: no " + python + ")");
            return;
        }
        SplittableRandom random = new SplittableRandom(8785);
        List<Json> trees = new ArrayList<>(TREES);
        for (int i = 0; i < TREES; i++) trees.add(randomTree(random, 0));
        List<String> theirs = run(python, trees);
        if (theirs == null) {
            System.out.println("      (skipped: python has no rfc8785 package)");
            return;
        }
        Expect.equal("python answered every tree", TREES, theirs.size());
        for (int i = 0; i < TREES; i++) {
            Expect.equal("tree " + i + " " + trees.get(i), theirs.get(i), trees.get(i).canonical());
        }
        System.out.println("      (" + TREES + " random trees agree with Python's rfc8785)");
    }

    /** A random value: containers near the top, scalars of every kind, names that sort differently in UTF-16 and code points. */
    static Json randomTree(SplittableRandom random, int depth) {
        int kind = random.nextInt(depth < 4 ? 8 : 6);
        switch (kind) {
            case 0: return Json.NULL;
            case 1: return Json.of(random.nextBoolean());
            case 2: case 3: return Json.of(EcmaNumberTest.randomDouble(random, random.nextInt(8)));
            case 4: case 5: return Json.of(randomText(random));
            case 6: {
                List<Json> items = new ArrayList<>();
                for (int i = random.nextInt(5); i > 0; i--) items.add(randomTree(random, depth + 1));
                return Json.array(items);
            }
            default: {
                LinkedHashMap<String, Json> members = new LinkedHashMap<>();
                for (int i = random.nextInt(6); i > 0; i--) members.put(randomText(random), randomTree(random, depth + 1));
                return Json.object(members);
            }
        }
    }

    private static final int[] ALPHABET = {
        'a', 'b', 'A', 'z', '0', '~', '/', '"', '\\', 0, 1, 0x1f, '\n', '\t', 0x7f, 0x80, 0xe9, 0x2028, 0x20ac,
        0xe000, 0xfb33, 0xfeff, 0xffff, 0x10000, 0x1f600, 0x10ffff,
    };

    private static String randomText(SplittableRandom random) {
        StringBuilder text = new StringBuilder();
        for (int i = random.nextInt(5); i > 0; i--) text.appendCodePoint(ALPHABET[random.nextInt(ALPHABET.length)]);
        return text.toString();
    }

    /** Python's forms of the trees, or null when the package is missing. */
    private static List<String> run(Path python, List<Json> trees) throws IOException, InterruptedException {
        Process process = new ProcessBuilder(python.toString(), "-c", SCRIPT).redirectErrorStream(false).start();
        CompletableFuture<List<String>> lines = CompletableFuture.supplyAsync(() -> {
            List<String> read = new ArrayList<>();
            try (BufferedReader in = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                for (String line = in.readLine(); line != null; line = in.readLine()) read.add(line);
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
            return read;
        });
        CompletableFuture<String> errors = CompletableFuture.supplyAsync(() -> {
            try {
                return new String(process.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
        });
        try (Writer out = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8)) {
            for (Json tree : trees) out.write(tree.toString() + "\n"); // stored (unsorted) order
        }
        if (!process.waitFor(60, TimeUnit.SECONDS)) {
            process.destroy();
            throw new AssertionError("python did not finish in 60 s");
        }
        if (process.exitValue() != 0) {
            if (errors.join().contains("No module named 'rfc8785'")) return null;
            throw new AssertionError("python failed: " + errors.join());
        }
        return lines.join();
    }
}
