package io.pushhub.client;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Reading the members of hub messages and stored records leniently (a member of the wrong kind
 * is as good as absent: unknown or malformed fields never throw, DESIGN §3's forward
 * compatibility), and building small messages.
 */
final class Fields {
    private Fields() {}

    /** {@code object[key]} when it is a string; else {@code null}. */
    static String string(Json object, String key) {
        Json value = object == null || object.kind() != Json.Kind.OBJECT ? null : object.get(key);
        return value != null && value.kind() == Json.Kind.STRING ? value.asString() : null;
    }

    /** {@code object[key]} when it is an integer a long holds exactly; else {@code null}. */
    static Long integer(Json object, String key) {
        Json value = object == null || object.kind() != Json.Kind.OBJECT ? null : object.get(key);
        if (value == null || value.kind() != Json.Kind.NUMBER) return null;
        double d = value.asDouble();
        if (d != Math.rint(d) || Math.abs(d) > 9.007199254740991E15) return null;
        return (long) d;
    }

    /** {@code object[key]} (any kind), or {@code null} when absent or {@code object} is not an object. */
    static Json member(Json object, String key) {
        return object == null || object.kind() != Json.Kind.OBJECT ? null : object.get(key);
    }

    /**
     * A {@code variants} member (experiment key → variant key) as the hub sends and we store it;
     * {@code null} when absent or not an object. Members whose value is not a string are skipped.
     */
    static Map<String, String> variants(Json value) {
        if (value == null || value.kind() != Json.Kind.OBJECT) return null;
        Map<String, String> variants = new LinkedHashMap<>();
        for (Map.Entry<String, Json> member : value.members().entrySet()) {
            Json variant = member.getValue();
            if (variant.kind() == Json.Kind.STRING) variants.put(member.getKey(), variant.asString());
        }
        return variants;
    }

    /** {@link #variants} of {@code value}, with none (an empty map) when absent or not an object. */
    static Map<String, String> variantsOrNone(Json value) {
        Map<String, String> variants = variants(value);
        return variants == null ? java.util.Collections.emptyMap() : variants;
    }

    /** {@code {"k1": v1, "k2": v2, …}} from alternating keys and values ({@link #json} kinds), in order. */
    static Json object(Object... keysAndValues) {
        Map<String, Json> members = new LinkedHashMap<>();
        for (int i = 0; i < keysAndValues.length; i += 2) {
            members.put((String) keysAndValues[i], json(keysAndValues[i + 1]));
        }
        return Json.object(members);
    }

    /** A Java value as JSON: a String, Long, Integer, Double, Boolean, Json, or a Map of them. */
    static Json json(Object value) {
        if (value instanceof Json) return (Json) value;
        if (value instanceof String) return Json.of((String) value);
        if (value instanceof Number) return Json.of(((Number) value).doubleValue());
        if (value instanceof Boolean) return Json.of((Boolean) value);
        if (value instanceof Map) {
            Map<String, Json> members = new LinkedHashMap<>();
            for (Map.Entry<?, ?> e : ((Map<?, ?>) value).entrySet()) {
                members.put((String) e.getKey(), json(e.getValue()));
            }
            return Json.object(members);
        }
        throw new IllegalArgumentException("no JSON form for " + value);
    }
}
