// The Java client's work per `patch` message on the hub's bench screen (DESIGN §4, §12): parse the
// ops, apply them to the held tree, write the new tree's RFC 8785 form and check its SHA-256.
//
//   mkdir -p /tmp/patchbench && javac --release 11 -d /tmp/patchbench \
//     clients/java/src/io/pushhub/client/*.java clients/java/bench/PatchBench.java &&
//   java -cp /tmp/patchbench io.pushhub.client.PatchBench [runs]
//
// The screen is bench/ws-bench/DiffTiming.swift's (and bench/js-client/bench.js's): 100 keyed
// sections × 99 keyed rows, 10,001 nodes, 636 KB canonical; each run replaces one row's label.
// Prints median, p95 and p99 in ms after a warm-up (the JIT's), for each part and for the whole.
package io.pushhub.client;

import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

final class PatchBench {
    private PatchBench() {}

    static Json screen() {
        List<Json> sections = new ArrayList<>();
        for (int s = 0; s < 100; s++) {
            List<Json> rows = new ArrayList<>();
            for (int i = 0; i < 99; i++) {
                rows.add(object("id", Json.of("item-" + s + "-" + i), "type", Json.of("row"),
                        "label", Json.of("Item " + i), "value", Json.of(s * 99 + i)));
            }
            sections.add(object("id", Json.of("section-" + s), "type", Json.of("section"),
                    "title", Json.of("Section " + s), "children", Json.array(rows)));
        }
        return object("type", Json.of("screen"), "children", Json.array(sections));
    }

    private static Json object(Object... namesAndValues) {
        Map<String, Json> members = new LinkedHashMap<>();
        for (int i = 0; i < namesAndValues.length; i += 2) {
            members.put((String) namesAndValues[i], (Json) namesAndValues[i + 1]);
        }
        return Json.object(members);
    }

    static int nodes(Json tree) {
        int own = tree.get("type") != null ? 1 : 0;
        int inside = 0;
        for (Json item : tree.items()) inside += nodes(item);
        for (Json member : tree.members().values()) inside += nodes(member);
        return own + inside;
    }

    /** The bytes of the canonical forms the writer kept in the tree's containers. */
    static long keptBytes(Json tree) {
        byte[] form = tree.canonicalForm();
        if (form != null) return form.length;
        long inside = 0;
        for (Json item : tree.items()) inside += keptBytes(item);
        for (Json member : tree.members().values()) inside += keptBytes(member);
        return inside;
    }

    /** The message's ops text for run {@code n}: one row's label. */
    static String ops(int n) {
        String path = "/children/" + (n % 100) + "/children/" + (n % 99) + "/label";
        return "[{\"op\":\"replace\",\"path\":\"" + path + "\",\"value\":\"edit " + n + "\"}]";
    }

    /** Sorted samples in ns → "median / p95 / p99 ms". */
    static String figures(long[] samples) {
        long[] sorted = samples.clone();
        Arrays.sort(sorted);
        return String.format("median %6.3f ms   p95 %6.3f ms   p99 %6.3f ms", ms(sorted[sorted.length / 2]),
                ms(sorted[(int) (sorted.length * 0.95)]), ms(sorted[(int) (sorted.length * 0.99)]));
    }

    private static double ms(long nanos) {
        return nanos / 1e6;
    }

    public static void main(String[] args) throws Exception {
        int runs = args.length > 0 ? Integer.parseInt(args[0]) : 2000;
        int warmUp = 1000;
        Json tree = screen();
        String snapshot = tree.canonical();
        System.out.printf("screen: %,d nodes, %,d bytes canonical; %d runs after %d warm-up runs; %s%n", nodes(tree),
                JsonWriter.canonicalUtf8(tree).size(), runs, warmUp, System.getProperty("java.vm.name") + " "
                        + System.getProperty("java.version"));

        long[] apply = new long[runs], total = new long[runs], canonical = new long[runs], digest = new long[runs];
        Json current = tree;
        for (int n = 0; n < warmUp + runs; n++) {
            long started = System.nanoTime();
            Json next = JsonPatch.apply(current, Json.parse(ops(n)));
            long applied = System.nanoTime();
            String hash = ScreenHash.of(next);
            long done = System.nanoTime();
            if (hash.length() != 64) throw new AssertionError(hash);
            current = next;
            if (n >= warmUp) {
                apply[n - warmUp] = applied - started;
                total[n - warmUp] = done - started;
            }
        }
        MessageDigest sha256 = MessageDigest.getInstance("SHA-256");
        for (int n = 0; n < warmUp + runs; n++) {
            long started = System.nanoTime();
            JsonWriter form = JsonWriter.canonicalUtf8(current);
            long written = System.nanoTime();
            sha256.update(form.buffer(), 0, form.size());
            byte[] sum = sha256.digest();
            long done = System.nanoTime();
            if (sum.length != 32) throw new AssertionError();
            if (n >= warmUp) {
                canonical[n - warmUp] = written - started;
                digest[n - warmUp] = done - written;
            }
        }
        int snapshotRuns = Math.max(runs / 10, 50);
        long[] parse = new long[snapshotRuns], fresh = new long[snapshotRuns];
        for (int n = 0; n < 100 + snapshotRuns; n++) {
            long started = System.nanoTime();
            Json parsed = Json.parse(snapshot);
            long done = System.nanoTime();
            String hash = ScreenHash.of(parsed);
            long hashed = System.nanoTime();
            if (parsed.size() != 2 || hash.length() != 64) throw new AssertionError();
            if (n >= 100) {
                parse[n - 100] = done - started;
                fresh[n - 100] = hashed - done;
            }
        }
        System.out.printf("canonical forms kept in the patched tree: %,d bytes (its canonical form: %,d bytes)%n",
                keptBytes(current), JsonWriter.canonicalUtf8(current).size());
        System.out.println("apply one-leaf patch (ops parsed)     " + figures(apply));
        System.out.println("apply + verify hash                   " + figures(total));
        System.out.println("  canonical UTF-8 of the patched tree " + figures(canonical));
        System.out.println("  SHA-256 of it (MessageDigest)       " + figures(digest));
        System.out.println("snapshot: parse the text              " + figures(parse));
        System.out.println("snapshot: hash it (no form kept yet)  " + figures(fresh));
    }
}
