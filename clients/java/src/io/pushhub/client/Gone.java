package io.pushhub.client;

/** A subscribed screen was deleted on the hub: its subscription ended (its stored tree is removed). */
public final class Gone implements ClientEvent {
    private final String screen;

    Gone(String screen) { this.screen = screen; }

    public String screen() { return screen; }

    @Override
    public void deliverTo(ClientListener listener) { listener.onGone(this); }

    @Override
    public boolean equals(Object other) { return other instanceof Gone && ((Gone) other).screen.equals(screen); }

    @Override
    public int hashCode() { return screen.hashCode(); }

    @Override
    public String toString() { return "Gone(" + screen + ")"; }
}
