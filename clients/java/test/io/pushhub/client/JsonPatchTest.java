package io.pushhub.client;

import static io.pushhub.client.Expect.equal;
import static io.pushhub.client.Expect.isTrue;
import static io.pushhub.client.Expect.throwsA;

/** RFC 6902: each operation, RFC 6902 Appendix A, refusals, all-or-nothing, shared subtrees. */
public final class JsonPatchTest {
    private JsonPatchTest() {}

    private static void patches(String doc, String ops, String expected) {
        Json result = JsonPatch.apply(Json.parse(doc), Json.parse(ops));
        equal(ops + " on " + doc, Json.parse(expected), result);
    }

    /** The patch is refused with a message naming operation {@code index} and containing {@code words}. */
    private static void refuses(String doc, String ops, int index, String words) {
        JsonException e = throwsA(ops, JsonException.class, () -> JsonPatch.apply(Json.parse(doc), Json.parse(ops)));
        isTrue(ops + ": \"" + e.getMessage() + "\" should name operation " + index + " and say " + words,
                e.getMessage().startsWith("patch operation " + index + ": ") && e.getMessage().contains(words));
    }

    public static void testRfc6902AppendixA() {
        patches("{\"foo\":\"bar\"}", "[{\"op\":\"add\",\"path\":\"/baz\",\"value\":\"qux\"}]", "{\"baz\":\"qux\",\"foo\":\"bar\"}"); // A.1
        patches("{\"foo\":[\"bar\",\"baz\"]}", "[{\"op\":\"add\",\"path\":\"/foo/1\",\"value\":\"qux\"}]", "{\"foo\":[\"bar\",\"qux\",\"baz\"]}"); // A.2
        patches("{\"baz\":\"qux\",\"foo\":\"bar\"}", "[{\"op\":\"remove\",\"path\":\"/baz\"}]", "{\"foo\":\"bar\"}"); // A.3
        patches("{\"foo\":[\"bar\",\"qux\",\"baz\"]}", "[{\"op\":\"remove\",\"path\":\"/foo/1\"}]", "{\"foo\":[\"bar\",\"baz\"]}"); // A.4
        patches("{\"baz\":\"qux\",\"foo\":\"bar\"}", "[{\"op\":\"replace\",\"path\":\"/baz\",\"value\":\"boo\"}]", "{\"baz\":\"boo\",\"foo\":\"bar\"}"); // A.5
        patches("{\"foo\":{\"bar\":\"baz\",\"waldo\":\"fred\"},\"qux\":{\"corge\":\"grault\"}}",
                "[{\"op\":\"move\",\"from\":\"/foo/waldo\",\"path\":\"/qux/thud\"}]",
                "{\"foo\":{\"bar\":\"baz\"},\"qux\":{\"corge\":\"grault\",\"thud\":\"fred\"}}"); // A.6
        patches("{\"foo\":[\"all\",\"grass\",\"cows\",\"eat\"]}", "[{\"op\":\"move\",\"from\":\"/foo/1\",\"path\":\"/foo/3\"}]",
                "{\"foo\":[\"all\",\"cows\",\"eat\",\"grass\"]}"); // A.7
        patches("{\"baz\":\"qux\",\"foo\":[\"a\",2,\"c\"]}",
                "[{\"op\":\"test\",\"path\":\"/baz\",\"value\":\"qux\"},{\"op\":\"test\",\"path\":\"/foo/1\",\"value\":2}]",
                "{\"baz\":\"qux\",\"foo\":[\"a\",2,\"c\"]}"); // A.8
        refuses("{\"baz\":\"qux\"}", "[{\"op\":\"test\",\"path\":\"/baz\",\"value\":\"bar\"}]", 0, "test failed"); // A.9
        patches("{\"foo\":\"bar\"}", "[{\"op\":\"add\",\"path\":\"/child\",\"value\":{\"grandchild\":{}}}]",
                "{\"foo\":\"bar\",\"child\":{\"grandchild\":{}}}"); // A.10
        patches("{\"foo\":\"bar\"}", "[{\"op\":\"add\",\"path\":\"/baz\",\"value\":\"qux\",\"xyz\":123}]",
                "{\"foo\":\"bar\",\"baz\":\"qux\"}"); // A.11: unknown members ignored
        refuses("{\"foo\":\"bar\"}", "[{\"op\":\"add\",\"path\":\"/baz/bat\",\"value\":\"qux\"}]", 0, "no member \"baz\""); // A.12
        patches("{\"/\":9,\"~1\":10}", "[{\"op\":\"test\",\"path\":\"/~01\",\"value\":10}]", "{\"/\":9,\"~1\":10}"); // A.14
        refuses("{\"/\":9,\"~1\":10}", "[{\"op\":\"test\",\"path\":\"/~01\",\"value\":\"10\"}]", 0, "test failed"); // A.15
        patches("{\"foo\":[\"bar\"]}", "[{\"op\":\"add\",\"path\":\"/foo/-\",\"value\":[\"abc\",\"def\"]}]",
                "{\"foo\":[\"bar\",[\"abc\",\"def\"]]}"); // A.16
    }

    public static void testRootAndEmptyNames() {
        patches("{\"a\":1}", "[{\"op\":\"replace\",\"path\":\"\",\"value\":[1]}]", "[1]");
        patches("{\"a\":1}", "[{\"op\":\"add\",\"path\":\"\",\"value\":3}]", "3");
        patches("{\"a\":1}", "[{\"op\":\"add\",\"path\":\"/\",\"value\":2}]", "{\"a\":1,\"\":2}");
        patches("{\"\":{\"\":1}}", "[{\"op\":\"replace\",\"path\":\"//\",\"value\":2}]", "{\"\":{\"\":2}}");
        patches("{\"a\":1}", "[{\"op\":\"test\",\"path\":\"\",\"value\":{\"a\":1}}]", "{\"a\":1}");
        refuses("{\"a\":1}", "[{\"op\":\"remove\",\"path\":\"\"}]", 0, "whole document");
        patches("{}", "[]", "{}");
    }

    public static void testAddSetsAnExistingMemberInPlace() {
        Json result = JsonPatch.apply(Json.parse("{\"a\":1,\"b\":2,\"c\":3}"), Json.parse("[{\"op\":\"add\",\"path\":\"/b\",\"value\":9}]"));
        equal("position kept", "{\"a\":1,\"b\":9,\"c\":3}", result.toString());
        result = JsonPatch.apply(Json.parse("{\"a\":1,\"b\":2}"), Json.parse("[{\"op\":\"replace\",\"path\":\"/a\",\"value\":0}]"));
        equal("replace keeps position", "{\"a\":0,\"b\":2}", result.toString());
    }

    public static void testArrayIndexes() {
        patches("[1,2]", "[{\"op\":\"add\",\"path\":\"/2\",\"value\":3}]", "[1,2,3]");
        patches("[1,2]", "[{\"op\":\"add\",\"path\":\"/0\",\"value\":0}]", "[0,1,2]");
        patches("[1,2]", "[{\"op\":\"add\",\"path\":\"/-\",\"value\":3}]", "[1,2,3]");
        refuses("[1,2]", "[{\"op\":\"add\",\"path\":\"/3\",\"value\":3}]", 0, "out of range");
        refuses("[1,2]", "[{\"op\":\"add\",\"path\":\"/01\",\"value\":3}]", 0, "not an array index");
        refuses("[1,2]", "[{\"op\":\"add\",\"path\":\"/-1\",\"value\":3}]", 0, "not an array index");
        refuses("[1,2]", "[{\"op\":\"add\",\"path\":\"/1.0\",\"value\":3}]", 0, "not an array index");
        refuses("[1,2]", "[{\"op\":\"add\",\"path\":\"/+1\",\"value\":3}]", 0, "not an array index");
        refuses("[1,2]", "[{\"op\":\"add\",\"path\":\"/\",\"value\":3}]", 0, "not an array index");
        refuses("[1,2]", "[{\"op\":\"add\",\"path\":\"/99999999999999999999\",\"value\":3}]", 0, "out of range");
        refuses("[1,2]", "[{\"op\":\"remove\",\"path\":\"/2\"}]", 0, "out of range");
        refuses("[1,2]", "[{\"op\":\"remove\",\"path\":\"/-\"}]", 0, "names no element");
        refuses("[1,2]", "[{\"op\":\"replace\",\"path\":\"/-\",\"value\":0}]", 0, "names no element");
        refuses("[1,2]", "[{\"op\":\"test\",\"path\":\"/-\",\"value\":0}]", 0, "names no element");
        refuses("[[1]]", "[{\"op\":\"add\",\"path\":\"/-/0\",\"value\":0}]", 0, "names no element");
        patches("[1,2]", "[{\"op\":\"replace\",\"path\":\"/1\",\"value\":0}]", "[1,0]");
        patches("{\"a\":[1,2,3]}", "[{\"op\":\"copy\",\"from\":\"/a/0\",\"path\":\"/a/-\"}]", "{\"a\":[1,2,3,1]}");
        patches("{\"0\":1}", "[{\"op\":\"replace\",\"path\":\"/0\",\"value\":2}]", "{\"0\":2}");
    }

    public static void testMoveAndCopy() {
        patches("{\"a\":{\"b\":1},\"c\":2}", "[{\"op\":\"move\",\"from\":\"/a\",\"path\":\"/c\"}]", "{\"c\":{\"b\":1}}");
        patches("{\"a\":1}", "[{\"op\":\"move\",\"from\":\"/a\",\"path\":\"/a\"}]", "{\"a\":1}");
        refuses("{\"a\":1}", "[{\"op\":\"move\",\"from\":\"/x\",\"path\":\"/x\"}]", 0, "no member \"x\"");
        refuses("{\"a\":{\"b\":1}}", "[{\"op\":\"move\",\"from\":\"/a\",\"path\":\"/a/b/c\"}]", 0, "its own child");
        refuses("{\"a\":{\"b\":1}}", "[{\"op\":\"move\",\"from\":\"/a\",\"path\":\"/a/x\"}]", 0, "its own child");
        refuses("{\"a\":{\"b\":1}}", "[{\"op\":\"move\",\"from\":\"\",\"path\":\"/a\"}]", 0, "its own child");
        // "/ab" is not inside "/a": a prefix of the text is not a prefix of the tokens.
        patches("{\"a\":{\"b\":1},\"ab\":{}}", "[{\"op\":\"move\",\"from\":\"/a\",\"path\":\"/ab/x\"}]", "{\"ab\":{\"x\":{\"b\":1}}}");
    }

    public static void testRefusesMalformedOperations() {
        refuses("{}", "[{\"op\":\"add\",\"path\":\"/a\",\"value\":1},{\"path\":\"/a\"}]", 1, "\"op\" must be a string");
        refuses("{}", "[{\"op\":\"frobnicate\",\"path\":\"/a\"}]", 0, "unknown op");
        refuses("{}", "[{\"op\":\"add\",\"path\":\"/a\"}]", 0, "\"value\" is missing");
        refuses("{}", "[{\"op\":\"replace\",\"path\":\"/a\"}]", 0, "\"value\" is missing");
        refuses("{}", "[{\"op\":\"add\",\"value\":1}]", 0, "\"path\" must be");
        refuses("{}", "[{\"op\":\"add\",\"path\":1,\"value\":1}]", 0, "\"path\" must be");
        refuses("{}", "[{\"op\":\"add\",\"path\":\"a\",\"value\":1}]", 0, "not a JSON Pointer");
        refuses("{}", "[{\"op\":\"add\",\"path\":\"/a~2\",\"value\":1}]", 0, "not followed by 0 or 1");
        refuses("{}", "[{\"op\":\"add\",\"path\":\"/a~\",\"value\":1}]", 0, "not followed by 0 or 1");
        refuses("{\"a\":1}", "[{\"op\":\"copy\",\"path\":\"/b\"}]", 0, "\"from\" must be");
        refuses("{}", "[1]", 0, "an operation is a JSON object");
        JsonException e = throwsA("not an array", JsonException.class, () -> JsonPatch.apply(Json.NULL, Json.parse("{}")));
        isTrue("says array", e.getMessage().contains("array"));
        patches("{}", "[{\"op\":\"add\",\"path\":\"/a\",\"value\":null}]", "{\"a\":null}");
    }

    public static void testRefusesMissingTargets() {
        refuses("{\"a\":1}", "[{\"op\":\"remove\",\"path\":\"/b\"}]", 0, "no member \"b\"");
        refuses("{\"a\":1}", "[{\"op\":\"replace\",\"path\":\"/b\",\"value\":1}]", 0, "no member \"b\"");
        refuses("{\"a\":1}", "[{\"op\":\"test\",\"path\":\"/b\",\"value\":1}]", 0, "no member \"b\"");
        refuses("{\"a\":1}", "[{\"op\":\"add\",\"path\":\"/a/b\",\"value\":1}]", 0, "cannot descend into a number");
        refuses("{\"a\":\"s\"}", "[{\"op\":\"test\",\"path\":\"/a/0\",\"value\":1}]", 0, "cannot descend into a string");
        refuses("{\"a\":[]}", "[{\"op\":\"copy\",\"from\":\"/a/0\",\"path\":\"/b\"}]", 0, "out of range");
    }

    public static void testTestComparesStructurally() {
        patches("{\"a\":{\"x\":1,\"y\":[1,2]}}", "[{\"op\":\"test\",\"path\":\"/a\",\"value\":{\"y\":[1,2.0],\"x\":1e0}}]",
                "{\"a\":{\"x\":1,\"y\":[1,2]}}");
        patches("{\"a\":-0}", "[{\"op\":\"test\",\"path\":\"/a\",\"value\":0}]", "{\"a\":0}");
        refuses("{\"a\":[1,2]}", "[{\"op\":\"test\",\"path\":\"/a\",\"value\":[2,1]}]", 0, "test failed");
        refuses("{\"a\":null}", "[{\"op\":\"test\",\"path\":\"/a\",\"value\":false}]", 0, "test failed");
        refuses("{\"a\":\"1\"}", "[{\"op\":\"test\",\"path\":\"/a\",\"value\":1}]", 0, "test failed");
    }

    public static void testAllOrNothing() {
        Json doc = Json.parse("{\"a\":[1,2],\"b\":{\"c\":1}}");
        String before = doc.toString();
        refuses(before, "[{\"op\":\"remove\",\"path\":\"/a/0\"},{\"op\":\"add\",\"path\":\"/b/c\",\"value\":2},"
                + "{\"op\":\"test\",\"path\":\"/b/c\",\"value\":3}]", 2, "test failed");
        throwsA("fails", JsonException.class, () -> JsonPatch.apply(doc,
                Json.parse("[{\"op\":\"remove\",\"path\":\"/a/0\"},{\"op\":\"remove\",\"path\":\"/zz\"}]")));
        equal("document unchanged", before, doc.toString());
    }

    public static void testSharesUntouchedSubtrees() {
        Json doc = Json.parse("{\"left\":{\"deep\":[1,2,3]},\"right\":{\"x\":[{\"y\":1},{\"z\":2}]}}");
        Json result = JsonPatch.apply(doc, Json.parse("[{\"op\":\"replace\",\"path\":\"/right/x/1/z\",\"value\":3}]"));
        isTrue("untouched member is the same instance", result.get("left") == doc.get("left"));
        isTrue("untouched sibling item is the same instance", result.get("right").get("x").get(0) == doc.get("right").get("x").get(0));
        isTrue("the path is new", result.get("right") != doc.get("right"));
        equal("the old tree is unchanged", Json.of(2), doc.get("right").get("x").get(1).get("z"));
        equal("the new tree has the change", Json.of(3), result.get("right").get("x").get(1).get("z"));
    }
}
