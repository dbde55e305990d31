package io.pushhub.client;

import static io.pushhub.client.Expect.equal;
import static io.pushhub.client.Expect.isTrue;
import static io.pushhub.client.Expect.throwsA;

import java.net.URI;
import java.util.HashMap;
import java.util.Map;

/** Declared components (DESIGN §16): what a hello may carry, refused at the builder. */
final class ComponentCapabilitiesTest {
    private ComponentCapabilitiesTest() {}

    static void testAGoodListIsDeclaredInNameOrder() {
        equal("no problem", null, ComponentCapabilities.problem(Map.of("Text", 1, "Carousel", 2)));
        equal("json", "{\"Carousel\":2,\"Text\":1}", ComponentCapabilities.json(Map.of("Text", 1, "Carousel", 2)).toString());
        equal("query", "Carousel:2,Text:1", ComponentCapabilities.query(Map.of("Text", 1, "Carousel", 2)));
        equal("none", null, ComponentCapabilities.problem(Map.of()));
    }

    static void testBadNamesAndVersionsAreRefusedSayingWhichAtTheBuilder() {
        isTrue("name", ComponentCapabilities.problem(Map.of("Bad Name", 1)).contains("\"Bad Name\" is not a component name"));
        equal("version", "Text is 0, not an integer from 1 to 1000", ComponentCapabilities.problem(Map.of("Text", 0)));
        Map<String, Integer> many = new HashMap<>();
        for (int i = 0; i <= ComponentCapabilities.MAX_COMPONENTS; i++) many.put("C" + i, 1);
        equal("too many", "1001 components, at most 1000", ComponentCapabilities.problem(many));
        IllegalArgumentException e = throwsA("the builder", IllegalArgumentException.class,
                () -> PushHub.options(URI.create("ws://h/v1/connect")).components(Map.of("Text", 1001)));
        isTrue(e.getMessage(), e.getMessage().contains("Text is 1001"));
        throwsA("not a ws URI", IllegalArgumentException.class, () -> PushHub.options(URI.create("http://h/")));
    }

    static void testANullNameIsAProblemNotANullPointerException() {
        java.util.Map<String, Integer> components = new java.util.HashMap<>();
        components.put("Text", 1);
        components.put(null, 1);
        equal("said", "null is not a component name (1–100 of A–Z a–z 0–9 . _ -)", ComponentCapabilities.problem(components));
    }
}
