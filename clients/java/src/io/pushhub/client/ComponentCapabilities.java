package io.pushhub.client;

import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Pattern;

/**
 * What a build can render (DESIGN §16): component name → the highest version of it the app
 * renders, declared in every {@code hello} as {@code components}
 * ({@link PushHubOptions.Builder#components}). The twin of clients/js/src/component-capabilities.js.
 *
 * <p>A declarable list has at most {@link #MAX_COMPONENTS} names, each 1–100 of
 * {@code A-Z a-z 0-9 . _ -} (case matters: it is the node's {@code "type"}), each with a version
 * 1…{@link #MAX_VERSION}; an empty map declares that the build renders no registered component.
 */
public final class ComponentCapabilities {
    public static final int MAX_COMPONENTS = 1000;
    public static final int MAX_VERSION = 1000;
    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9._-]{1,100}");

    private ComponentCapabilities() {}

    /**
     * Why {@code components} cannot be declared (one sentence naming the first bad entry, in name
     * order), or {@code null}.
     */
    public static String problem(Map<String, Integer> components) {
        if (components.size() > MAX_COMPONENTS) return components.size() + " components, at most " + MAX_COMPONENTS;
        // Before the sorted copy, which would throw on a null name.
        for (String name : components.keySet()) {
            if (name == null) return "null is not a component name (1–100 of A–Z a–z 0–9 . _ -)";
        }
        for (Map.Entry<String, Integer> entry : new TreeMap<>(components).entrySet()) {
            String name = entry.getKey();
            if (name == null || !NAME.matcher(name).matches()) {
                return Json.of(String.valueOf(name)) + " is not a component name (1–100 of A–Z a–z 0–9 . _ -)";
            }
            Integer version = entry.getValue();
            if (version == null || version < 1 || version > MAX_VERSION) {
                return name + " is " + version + ", not an integer from 1 to " + MAX_VERSION;
            }
        }
        return null;
    }

    /** {@code hello.components}: {@code {"Carousel":2,"Text":1}}, names in order. */
    static Json json(Map<String, Integer> components) {
        return Fields.json(new TreeMap<>(components));
    }

    /** An HTTP fetch's {@code components} query parameter: {@code Carousel:2,Text:1} ("" for none). */
    static String query(Map<String, Integer> components) {
        StringBuilder out = new StringBuilder();
        for (Map.Entry<String, Integer> e : new TreeMap<>(components).entrySet()) {
            if (out.length() > 0) out.append(',');
            out.append(e.getKey()).append(':').append(e.getValue());
        }
        return out.toString();
    }
}
