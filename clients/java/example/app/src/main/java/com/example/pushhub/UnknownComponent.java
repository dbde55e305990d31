package com.example.pushhub;

import io.pushhub.client.RenderErrorDescribing;

/** A node this build cannot draw: the client sends a render_error naming the component. */
final class UnknownComponent extends Exception implements RenderErrorDescribing {
    private static final long serialVersionUID = 1L;
    private final String component;

    UnknownComponent(String component) {
        super("this build cannot draw a \"" + component + "\"");
        this.component = component;
    }

    @Override
    public String component() {
        return component;
    }
}
