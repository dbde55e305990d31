package io.pushhub.client;

/**
 * What a {@code render_error} says about an exception (DESIGN §15, docs/protocol.md): the
 * component ({@link RenderErrorDescribing#component()}, else none) and the message (the
 * exception's message, else its class name). The twin of Sources/PushHubClient/RenderErrorReport.swift
 * and clients/js/src/render-error.js.
 *
 * <p>Invariant: {@code component} has at most {@link #MAX_COMPONENT} and {@code message} at most
 * {@link #MAX_MESSAGE} code points, never a lone surrogate (the hub's I-JSON parser refuses one):
 * longer text is cut without splitting a pair, never refused. Immutable.
 */
final class RenderErrorReport {
    static final int MAX_MESSAGE = 1000;
    static final int MAX_COMPONENT = 200;

    final String component;
    final String message;

    RenderErrorReport(String component, String message) {
        this.component = component == null ? null : wellFormedPrefix(component, MAX_COMPONENT);
        this.message = wellFormedPrefix(message, MAX_MESSAGE);
    }

    /**
     * The report of {@code error}. Its {@code component()} and {@code getMessage()} are the app's
     * code: one that throws counts as none (no component; the class name as the message).
     */
    static RenderErrorReport of(Throwable error) {
        String component = null;
        if (error instanceof RenderErrorDescribing) {
            try {
                component = ((RenderErrorDescribing) error).component();
            } catch (Throwable broken) {
                component = null;
            }
        }
        String message;
        try {
            message = error.getMessage();
        } catch (Throwable broken) {
            message = null;
        }
        return new RenderErrorReport(component, message != null ? message : error.getClass().getName());
    }

    /** {@code {"type":"render_error","screen","version","hash"?,"component"?,"message"}}. */
    Json message(String screen, long version, String hash) {
        java.util.Map<String, Object> fields = new java.util.LinkedHashMap<>();
        fields.put("type", "render_error");
        fields.put("screen", screen);
        fields.put("version", version);
        if (hash != null) fields.put("hash", hash);
        if (component != null) fields.put("component", component);
        fields.put("message", message);
        return Fields.json(fields);
    }

    /** The first {@code limit} code points of {@code text}, each lone surrogate replaced by U+FFFD. */
    static String wellFormedPrefix(String text, int limit) {
        StringBuilder out = new StringBuilder();
        int count = 0;
        for (int i = 0; i < text.length() && count < limit; count++) {
            char c = text.charAt(i);
            if (Character.isHighSurrogate(c) && i + 1 < text.length() && Character.isLowSurrogate(text.charAt(i + 1))) {
                out.append(c).append(text.charAt(i + 1));
                i += 2;
            } else {
                out.append(Character.isSurrogate(c) ? '\uFFFD' : c);
                i += 1;
            }
        }
        return out.toString();
    }
}
