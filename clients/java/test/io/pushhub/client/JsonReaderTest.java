package io.pushhub.client;

import static io.pushhub.client.Expect.equal;
import static io.pushhub.client.Expect.isTrue;
import static io.pushhub.client.JsonExpect.refuses;

/** The strict parser: what RFC 8259 and I-JSON refuse, with the char offset of the fault. */
public final class JsonReaderTest {
    private JsonReaderTest() {}

    public static void testAcceptsEveryKindWithWhitespaceAround() {
        Json value = Json.parse(" \t\r\n{\"a\" : [ 1 , -2.5e3 , true , false , null , \"x\" ] , \"b\":{}} \n");
        equal("compact", "{\"a\":[1,-2500,true,false,null,\"x\"],\"b\":{}}", value.toString());
        equal("scalar at top level", Json.of(3), Json.parse("3"));
        equal("string at top level", Json.of("s"), Json.parse("\"s\""));
        equal("empty array", 0, Json.parse("[]").size());
    }

    public static void testRefusesWhatRfc8259Refuses() {
        refuses("", 0, "end of the text");
        refuses("   ", 3, "end of the text");
        refuses("[1,]", 3, "expected a value");
        refuses("[1 2]", 3, "expected ',' or ']'");
        refuses("{\"a\":1,}", 7, "member name");
        refuses("{\"a\" 1}", 5, "':'");
        refuses("{a:1}", 1, "member name");
        refuses("{'a':1}", 1, "member name");
        refuses("[1] x", 4, "end of the text after the value");
        refuses("[1]]", 3, "end of the text after the value");
        refuses("// c\n1", 0, "expected a value");
        refuses("tru", 0, "'true'");
        refuses("nul", 0, "'null'");
        refuses("True", 0, "expected a value");
        refuses("[", 1, "end of the text");
        refuses("{\"a\":1", 6, "',' or '}'");
        refuses("\u00a01", 0, "expected a value");
    }

    public static void testRefusesBadNumbers() {
        refuses("01", 1, "leading zeros");
        refuses("-01", 2, "leading zeros");
        refuses("+1", 0, "expected a value");
        refuses("-", 1, "digit");
        refuses("1.", 2, "after the decimal point");
        refuses(".5", 0, "expected a value");
        refuses("1e", 2, "exponent");
        refuses("1e+", 3, "exponent");
        refuses("NaN", 0, "expected a value");
        refuses("Infinity", 0, "expected a value");
        refuses("-Infinity", 1, "digit");
        refuses("[0, 1e400]", 4, "out of the range of a double");
        refuses("-1e309", 0, "out of the range");
        refuses("0x10", 1, "end of the text after the value");
    }

    public static void testReadsNumbersExactly() {
        equal("-0 keeps its sign", Double.doubleToRawLongBits(-0.0), Double.doubleToRawLongBits(Json.parse("-0").asDouble()));
        equal("-0.0", Double.doubleToRawLongBits(-0.0), Double.doubleToRawLongBits(Json.parse("-0.0").asDouble()));
        equal("5e-324", Double.MIN_VALUE, Json.parse("5e-324").asDouble());
        equal("underflow to 0 is allowed", 0.0, Json.parse("1e-400").asDouble());
        equal("max", Double.MAX_VALUE, Json.parse("1.7976931348623157e308").asDouble());
        equal("2^53 + 1 rounds to even", 9007199254740992.0, Json.parse("9007199254740993").asDouble());
        equal("15 digits fast path", 999999999999999.0, Json.parse("999999999999999").asDouble());
        equal("-15 digits", -123456789012345.0, Json.parse("-123456789012345").asDouble());
        equal("E", 1e21, Json.parse("1E21").asDouble());
        equal("e-", 0.001, Json.parse("1e-3").asDouble());
    }

    public static void testRefusesBadStrings() {
        refuses("\"abc", 4, "not closed");
        refuses("\"a\nb\"", 2, "control character");
        refuses("\"\t\"", 1, "control character");
        refuses("\"\\x\"", 2, "unknown escape");
        refuses("\"\\u12\"", 5, "four hex digits");
        refuses("\"\\u12G4\"", 5, "four hex digits");
        refuses("\"\\u\uff11234\"", 3, "four hex digits");
        refuses("\"\\", 2, "escape is not finished");
        refuses("\"\\'\"", 2, "unknown escape");
    }

    public static void testRefusesLoneSurrogates() {
        refuses("\"ab\\ud800\"", 3, "high surrogate");
        refuses("\"\\ud800x\"", 1, "high surrogate");
        refuses("\"\\ud800\\u0041\"", 7, "low surrogate");
        refuses("\"\\udc00\"", 1, "lone low surrogate");
        refuses("\"\\ud800\\ud800\"", 7, "low surrogate");
        refuses("\"x\ud800\"", 2, "lone surrogate");
        refuses("\"x\udc00y\"", 2, "lone surrogate");
        refuses("{\"\ud83d\":1}", 2, "lone surrogate");
    }

    public static void testReadsEscapesAndNonBmp() {
        Json s = Json.parse("\"\\\" \\\\ \\/ \\b \\f \\n \\r \\t \\u00e9 \\u20AC \\ud83d\\ude00 \ud83d\ude00 é\"");
        equal("escapes", "\" \\ / \b \f \n \r \t é € \ud83d\ude00 \ud83d\ude00 é", s.asString());
        equal("no escapes: same text", "plain", Json.parse("\"plain\"").asString());
        equal("\\u0000", "\u0000", Json.parse("\"\\u0000\"").asString());
    }

    public static void testRefusesDuplicateMemberNamesWhereTheSecondIs() {
        refuses("{\"a\":1,\"b\":2,\"a\":3}", 13, "duplicate member name \"a\"");
        refuses("{\"é\":1,\"\\u00e9\":2}", 7, "duplicate");
        // Distinct code points are distinct names, even when Unicode calls them equivalent.
        equal("é and e + U+0301", 2, Json.parse("{\"\u00e9\":1,\"e\u0301\":2}").size());
    }

    public static void testNestingUpTo256() {
        String ok = "[".repeat(256) + "]".repeat(256);
        isTrue("256 deep", Json.parse(ok).kind() == Json.Kind.ARRAY);
        refuses("[".repeat(257) + "]".repeat(257), 256, "deeper than 256");
        refuses("{\"a\":".repeat(257) + "1" + "}".repeat(257), 5 * 256, "deeper than 256");
        // Far deeper is refused the same way, without a stack overflow.
        refuses("[".repeat(100_000), 256, "deeper than 256");
    }

    public static void testKeepsMemberOrderAsWritten() {
        Json value = Json.parse("{\"b\":1,\"a\":2,\"c\":3}");
        equal("order", "[b, a, c]", value.members().keySet().toString());
        equal("compact keeps it", "{\"b\":1,\"a\":2,\"c\":3}", value.toString());
    }
}
