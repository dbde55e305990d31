package io.pushhub.client;

import static io.pushhub.client.Expect.equal;
import static io.pushhub.client.Expect.isTrue;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/** RFC 8785: member order by UTF-16 code units, minimal escapes, ECMAScript numbers; the screen hash. */
public final class CanonicalTest {
    private CanonicalTest() {}

    private static void canonical(String input, String expected) {
        Json value = Json.parse(input);
        equal("canonical of " + input, expected, value.canonical());
        equal("canonical reads back: " + input, value, Json.parse(value.canonical()));
        equal("canonical is a fixed point: " + input, expected, Json.parse(expected).canonical());
    }

    public static void testRfc8785Example() {
        // RFC 8785 §3.2.4's input and output.
        canonical("{\n  \"numbers\": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],\n"
                        + "  \"string\": \"\\u20ac$\\u000F\\u000aA'\\u0042\\u0022\\u005c\\\\\\\"\\/\",\n"
                        + "  \"literals\": [null, true, false]\n}",
                "{\"literals\":[null,true,false],\"numbers\":[333333333.3333333,1e+30,4.5,0.002,1e-27],"
                        + "\"string\":\"€$\\u000f\\nA'B\\\"\\\\\\\\\\\"/\"}");
    }

    public static void testMembersSortByUtf16CodeUnits() {
        // RFC 8785 §3.2.3: U+1F600 (D83D DE00) sorts before U+FB33, after U+20AC; by code point it would be last.
        canonical("{\"\\u20ac\":1,\"\\r\":2,\"\\ufb33\":3,\"1\":4,\"\\ud83d\\ude00\":5,\"\\u0080\":6,\"\\u00f6\":7}",
                "{\"\\r\":2,\"1\":4,\"\u0080\":6,\"ö\":7,\"€\":1,\"\ud83d\ude00\":5,\"\ufb33\":3}");
        canonical("{\"\\ue000\":1,\"\\ud800\\udc00\":2,\"\\uffff\":3}", "{\"\ud800\udc00\":2,\"\ue000\":1,\"\uffff\":3}");
        canonical("{\"b\":1,\"a\":{\"d\":1,\"c\":2},\"\":0,\"aa\":3,\"A\":4}", "{\"\":0,\"A\":4,\"a\":{\"c\":2,\"d\":1},\"aa\":3,\"b\":1}");
    }

    public static void testStringsUseTheMinimalEscapes() {
        canonical("\"\\u0000\\u0001\\b\\t\\n\\u000b\\f\\r\\u000e\\u001f \\\" \\\\ \\/ \\u007f \\u2028 \\u2029\"",
                "\"\\u0000\\u0001\\b\\t\\n\\u000b\\f\\r\\u000e\\u001f \\\" \\\\ / \u007f \u2028 \u2029\"");
        canonical("\"\\u00e9\\ud83d\\ude00\"", "\"é\ud83d\ude00\"");
    }

    public static void testNumbersAsEcmaScriptWritesThem() {
        canonical("[-0, 0.0, 1e21, 1e20, 123e18, 5e-324, 1e-7, 1e-6, 0.000001234, 1.5e300, -1.5, 9007199254740993,"
                        + " 4.35, 0.1, 100, 1e2, 2e-3, 1.7976931348623157e308, 295147905179352830000]",
                "[0,0,1e+21,100000000000000000000,123000000000000000000,5e-324,1e-7,0.000001,0.000001234,1.5e+300,-1.5,"
                        + "9007199254740992,4.35,0.1,100,100,0.002,1.7976931348623157e+308,295147905179352830000]");
    }

    public static void testBuiltObjectsSortToo() {
        Map<String, Json> members = new TreeMap<>((a, b) -> b.compareTo(a)); // reverse order
        members.put("a", Json.of(1));
        members.put("b", Json.of(2));
        Json object = Json.object(members);
        equal("stored order", "{\"b\":2,\"a\":1}", object.toString());
        equal("canonical order", "{\"a\":1,\"b\":2}", object.canonical());
    }

    public static void testScreenHashIsSha256OfTheCanonicalUtf8() throws Exception {
        Json tree = Json.parse("{\"type\":\"screen\",\"children\":[{\"type\":\"text\",\"text\":\"héllo \ud83d\ude00\",\"size\":1.5}]}");
        byte[] digest = MessageDigest.getInstance("SHA-256").digest(tree.canonical().getBytes(StandardCharsets.UTF_8));
        StringBuilder hex = new StringBuilder();
        for (byte b : digest) hex.append(String.format("%02x", b));
        equal("hash", hex.toString(), ScreenHash.of(tree));
        // Known answers: SHA-256 of "{}" and of "null".
        equal("{}", "44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a", ScreenHash.of(Json.parse("{ }")));
        equal("null", "74234e98afe7498fb5daf1f36ac2d78acc339464f950703b8c019892f982b90b", ScreenHash.of(Json.NULL));
        equal("order does not change the hash", ScreenHash.of(Json.parse("{\"a\":1,\"b\":2}")), ScreenHash.of(Json.parse("{\"b\":2,\"a\":1}")));
    }

    public static void testLargeStringsAndTreesWriteWhole() {
        String big = "x".repeat(100_000) + "é" + "\ud83d\ude00".repeat(1000) + "\n";
        Json value = Json.array(List.of(Json.of(big), Json.of(big)));
        equal("reads back", value, Json.parse(value.canonical()));
        equal("utf-8 length", 2 * (100_000 + 2 + 4000 + 2 + 2) + 3,
                value.canonical().getBytes(StandardCharsets.UTF_8).length);
    }

    public static void testKeptFormsFollowPatches() {
        // Sections of 60 rows: each rows array is past JsonWriter.KEEP_BYTES, a frontier container.
        StringBuilder text = new StringBuilder("{\"type\":\"screen\",\"children\":[");
        for (int s = 0; s < 20; s++) {
            text.append(s > 0 ? "," : "").append("{\"title\":\"S").append(s).append("\",\"children\":[");
            for (int i = 0; i < 60; i++) text.append(i > 0 ? "," : "").append("{\"id\":\"row-").append(i).append("\",\"v\":").append(i).append("}");
            text.append("]}");
        }
        Json tree = Json.parse(text.append("]}").toString());
        String first = ScreenHash.of(tree);
        isTrue("a rows array keeps its form", tree.get("children").get(3).get("children").canonicalForm() != null);
        isTrue("a row is too small to keep one", tree.get("children").get(3).get("children").get(0).canonicalForm() == null);
        isTrue("above the frontier nothing is kept", tree.canonicalForm() == null && tree.get("children").canonicalForm() == null);
        equal("the kept forms give the same hash", first, ScreenHash.of(tree));
        SplittableRandom random = new SplittableRandom(1);
        String[] ops = {
            "[{\"op\":\"add\",\"path\":\"/children/%d/children/%d/v\",\"value\":\"é%d\"}]",
            "[{\"op\":\"remove\",\"path\":\"/children/%d/children/%d\"},{\"op\":\"add\",\"path\":\"/children/0/children/0\",\"value\":{\"z\":%d,\"a\":1}}]",
            "[{\"op\":\"copy\",\"from\":\"/children/%1$d/children/%2$d\",\"path\":\"/children/%1$d/children/0/copy\"},{\"op\":\"replace\",\"path\":\"/type\",\"value\":%3$d}]",
        };
        for (int n = 0; n < 300; n++) {
            String patch = String.format(ops[n % 3], random.nextInt(19), random.nextInt(50), n);
            tree = JsonPatch.apply(tree, Json.parse(patch));
            Json fresh = Json.parse(tree.toString());
            equal("after " + patch, fresh.canonical(), tree.canonical());
            equal("hash after " + patch, ScreenHash.of(fresh), ScreenHash.of(tree));
        }
    }

    public static void testThreadsHashingOneTreeAgree() throws Exception {
        StringBuilder text = new StringBuilder("[");
        for (int s = 0; s < 50; s++) {
            text.append(s > 0 ? "," : "").append("{\"rows\":[");
            for (int i = 0; i < 80; i++) text.append(i > 0 ? "," : "").append("{\"b\":").append(i).append(",\"a\":\"x\"}");
            text.append("]}");
        }
        String source = text.append("]").toString();
        String expected = ScreenHash.of(Json.parse(source));
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try {
            for (int round = 0; round < 20; round++) {
                Json shared = Json.parse(source); // nothing kept yet: the threads race to keep the forms
                List<Future<String>> hashes = new ArrayList<>();
                for (int t = 0; t < 4; t++) hashes.add(pool.submit(() -> ScreenHash.of(shared)));
                for (Future<String> hash : hashes) equal("round " + round, expected, hash.get());
            }
        } finally {
            pool.shutdown();
        }
    }
}
