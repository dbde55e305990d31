package io.pushhub.client;

import static io.pushhub.client.Expect.equal;
import static io.pushhub.client.Expect.isTrue;
import static io.pushhub.client.Expect.throwsA;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** The value type: building, reading, structural equality, immutability. */
public final class JsonTest {
    private JsonTest() {}

    public static void testBuildsAndReadsEachKind() {
        equal("null", Json.Kind.NULL, Json.NULL.kind());
        isTrue("isNull", Json.NULL.isNull() && !Json.FALSE.isNull());
        equal("of(true)", Json.TRUE, Json.of(true));
        isTrue("asBoolean", Json.of(true).asBoolean() && !Json.FALSE.asBoolean());
        equal("asDouble", 2.5, Json.of(2.5).asDouble());
        equal("asString", "é😀", Json.of("é😀").asString());
        Json array = Json.array(Arrays.asList(Json.of(1), Json.of("two")));
        equal("size", 2, array.size());
        equal("get(1)", Json.of("two"), array.get(1));
        equal("get out of range", null, array.get(2));
        equal("get(-1)", null, array.get(-1));
        equal("get(key) on an array", null, array.get("a"));
        Map<String, Json> members = new LinkedHashMap<>();
        members.put("z", Json.of(1));
        members.put("a", Json.NULL);
        Json object = Json.object(members);
        equal("member", Json.of(1), object.get("z"));
        equal("absent member", null, object.get("y"));
        equal("get(index) on an object", null, object.get(0));
        equal("scalar size", 0, Json.of(3).size());
        equal("scalar items", 0, Json.of(3).items().size());
        equal("scalar members", 0, Json.of(3).members().size());
        equal("message text keeps order", "{\"z\":1,\"a\":null}", object.toString());
    }

    public static void testAsLongTakesExactIntegersOnly() {
        equal("42", 42L, Json.of(42).asLong());
        equal("-2^53", -9007199254740992L, Json.of(-9007199254740992.0).asLong());
        equal("-2^63", Long.MIN_VALUE, Json.of(-0x1p63).asLong());
        equal("-0", 0L, Json.of(-0.0).asLong());
        throwsA("fraction", IllegalStateException.class, () -> Json.of(1.5).asLong());
        throwsA("2^63", IllegalStateException.class, () -> Json.of(0x1p63).asLong());
        throwsA("1e300", IllegalStateException.class, () -> Json.of(1e300).asLong());
    }

    public static void testWrongKindIsIllegalState() {
        throwsA("asString of a number", IllegalStateException.class, () -> Json.of(1).asString());
        throwsA("asDouble of a string", IllegalStateException.class, () -> Json.of("1").asDouble());
        throwsA("asBoolean of null", IllegalStateException.class, Json.NULL::asBoolean);
        throwsA("asLong of an array", IllegalStateException.class, () -> Json.array(List.of()).asLong());
    }

    public static void testRefusesWhatJsonCannotHold() {
        throwsA("NaN", IllegalArgumentException.class, () -> Json.of(Double.NaN));
        throwsA("infinity", IllegalArgumentException.class, () -> Json.of(Double.NEGATIVE_INFINITY));
        throwsA("lone surrogate", IllegalArgumentException.class, () -> Json.of("a\ud800"));
        throwsA("lone low surrogate", IllegalArgumentException.class, () -> Json.of("\udc00b"));
        throwsA("lone surrogate name", IllegalArgumentException.class, () -> Json.object(Map.of("\ud800", Json.NULL)));
        throwsA("null string", NullPointerException.class, () -> Json.of((String) null));
        throwsA("null item", NullPointerException.class, () -> Json.array(Arrays.asList(Json.TRUE, null)));
        Map<String, Json> withNull = new LinkedHashMap<>();
        withNull.put("a", null);
        throwsA("null member", NullPointerException.class, () -> Json.object(withNull));
    }

    public static void testEqualityIsStructural() {
        equal("member order ignored", Json.parse("{\"a\":1,\"b\":[1,{\"c\":2,\"d\":3}]}"),
                Json.parse("{\"b\":[1,{\"d\":3,\"c\":2}],\"a\":1}"));
        isTrue("array order matters", !Json.parse("[1,2]").equals(Json.parse("[2,1]")));
        equal("-0 == 0", Json.of(0), Json.of(-0.0));
        equal("-0 and 0 hash alike", Json.of(0).hashCode(), Json.of(-0.0).hashCode());
        equal("1 == 1.0", Json.parse("1"), Json.parse("1.0e0"));
        isTrue("1 != \"1\"", !Json.of(1).equals(Json.of("1")));
        isTrue("null != false", !Json.NULL.equals(Json.FALSE));
        isTrue("{} != []", !Json.parse("{}").equals(Json.parse("[]")));
        isTrue("extra member", !Json.parse("{\"a\":1}").equals(Json.parse("{\"a\":1,\"b\":1}")));
        isTrue("é != e + U+0301", !Json.of("\u00e9").equals(Json.of("e\u0301")));
        equal("equal hashCodes", Json.parse("{\"a\":[1,\"x\"],\"b\":null}").hashCode(),
                Json.parse("{\"b\":null,\"a\":[1.0,\"x\"]}").hashCode());
    }

    public static void testIsImmutable() {
        List<Json> source = new ArrayList<>(List.of(Json.of(1)));
        Json array = Json.array(source);
        source.add(Json.of(2));
        equal("array copied", 1, array.size());
        Map<String, Json> map = new LinkedHashMap<>(Map.of("a", Json.of(1)));
        Json object = Json.object(map);
        map.put("b", Json.of(2));
        equal("object copied", 1, object.size());
        throwsA("items unmodifiable", UnsupportedOperationException.class, () -> array.items().add(Json.NULL));
        throwsA("members unmodifiable", UnsupportedOperationException.class, () -> object.members().put("c", Json.NULL));
        Json parsed = Json.parse("{\"a\":[1]}");
        throwsA("parsed members unmodifiable", UnsupportedOperationException.class, () -> parsed.members().remove("a"));
        throwsA("parsed items unmodifiable", UnsupportedOperationException.class, () -> parsed.get("a").items().clear());
    }

    public static void testToStringIsCompactJsonThatReadsBack() {
        Json value = Json.parse("{ \"b\" : [ 1.5 , \"\\u0001\\\"\" ] , \"a\" : -0 }");
        equal("compact", "{\"b\":[1.5,\"\\u0001\\\"\"],\"a\":0}", value.toString());
        equal("reads back", value, Json.parse(value.toString()));
    }

    public static void testObjectsOfManyMembers() {
        StringBuilder text = new StringBuilder("{");
        Map<String, Json> expected = new java.util.HashMap<>();
        for (int i = 0; i < 50; i++) {
            text.append(i > 0 ? "," : "").append("\"k").append(49 - i).append("\":").append(i);
            expected.put("k" + (49 - i), Json.of(i));
        }
        Json object = Json.parse(text.append("}").toString());
        equal("size", 50, object.size());
        equal("lookup past the linear scan", Json.of(40), object.get("k9"));
        equal("absent", null, object.get("k50"));
        isTrue("containsKey", object.members().containsKey("k0") && !object.members().containsKey("x"));
        equal("a Map equal to a HashMap of the same members", expected, object.members());
        equal("and the other way", object.members(), expected);
        equal("same hashCode as the HashMap", expected.hashCode(), object.members().hashCode());
        equal("iteration in stored order", "k49", object.members().keySet().iterator().next());
        JsonExpect.refuses(text.substring(0, text.length() - 1) + ",\"k7\":0}", text.length(), "duplicate member name \"k7\"");
        Json patched = JsonPatch.apply(object, Json.parse(
                "[{\"op\":\"remove\",\"path\":\"/k20\"},{\"op\":\"add\",\"path\":\"/new\",\"value\":1},"
                        + "{\"op\":\"replace\",\"path\":\"/k49\",\"value\":true}]"));
        equal("size after", 50, patched.size());
        equal("removed", null, patched.get("k20"));
        equal("added last", "new", new ArrayList<>(patched.members().keySet()).get(49));
        equal("replaced in place", "k49", patched.members().keySet().iterator().next());
        equal("replaced", Json.TRUE, patched.get("k49"));
        equal("the original is unchanged", Json.of(29), object.get("k20"));
    }
}
