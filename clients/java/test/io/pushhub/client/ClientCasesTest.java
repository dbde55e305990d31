package io.pushhub.client;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The Java runner of the cases all three clients share, {@code Tests/ClientCases/cases.json}:
 * each canonical case's input parsed here and written back must give its canonical text and
 * hash; each patch case applied here must give its expected tree (structural equality) or fail.
 *
 * <p>The file is found from the repository root ({@link RepoRoot}). Every failing case is reported by
 * name, all at once.
 */
public final class ClientCasesTest {
    private ClientCasesTest() {}

    static final String CASES = "Tests/ClientCases/cases.json";

    public static void testCanonicalCases() throws IOException {
        List<String> failures = new ArrayList<>();
        List<Json> cases = cases().get("canonical").items();
        for (Json c : cases) {
            String name = c.get("name").asString();
            try {
                Json value = Json.parse(c.get("input").asString());
                String canonical = value.canonical();
                String expected = c.get("canonical").asString();
                if (!canonical.equals(expected)) {
                    failures.add(name + ": canonical " + canonical + ", expected " + expected);
                } else if (!ScreenHash.of(value).equals(c.get("hash").asString())) {
                    failures.add(name + ": hash " + ScreenHash.of(value) + ", expected " + c.get("hash").asString());
                }
            } catch (RuntimeException e) {
                failures.add(name + ": " + e);
            }
        }
        report("canonical", cases.size(), failures);
    }

    public static void testPatchCases() throws IOException {
        List<String> failures = new ArrayList<>();
        List<Json> cases = cases().get("patch").items();
        for (Json c : cases) {
            String name = c.get("name").asString();
            Json expected = c.get("expected");
            try {
                Json result = JsonPatch.apply(c.get("doc"), c.get("ops"));
                if (expected == null) {
                    failures.add(name + ": applied (giving " + result + ") but should fail: " + c.get("error"));
                } else if (!result.equals(expected)) {
                    failures.add(name + ": gave " + result + ", expected " + expected);
                }
            } catch (JsonException e) {
                if (expected != null) failures.add(name + ": failed (" + e.getMessage() + ") but should give " + expected);
            } catch (RuntimeException e) {
                failures.add(name + ": " + e);
            }
        }
        report("patch", cases.size(), failures);
    }

    private static void report(String kind, int count, List<String> failures) {
        if (!failures.isEmpty()) {
            throw new AssertionError(failures.size() + " of " + count + " " + kind + " cases failed:\n  "
                    + String.join("\n  ", failures));
        }
        System.out.println("      (" + count + " " + kind + " cases from " + source() + ")");
    }

    private static Json cases() throws IOException {
        return Json.parse(new String(Files.readAllBytes(source()), StandardCharsets.UTF_8));
    }

    static Path source() {
        return RepoRoot.get().resolve(CASES);
    }
}
