package io.pushhub.client;

import java.util.Arrays;
import java.util.List;

/**
 * What {@link ClientSession} asks its shell ({@link PushHub}) to do, in order. Each action calls
 * one method of a {@link Performer}, so a new kind of action is a new method every performer must
 * implement (the compiler finds each place a decision is needed). Immutable values with
 * structural equality (the tests compare them).
 */
abstract class SessionAction {
    /** Performs actions: the shell, or a test's recorder. */
    interface Performer {
        /**
         * Send the message on the current connection; when it cannot take it (there is none, or
         * it is closing), tell the session ({@code unsent}): it keeps acks, tracks and render
         * reports for after the next welcome.
         */
        void send(Json message);

        /**
         * Hand a tree to the screen's listeners; then, unless it is from {@code CACHE}, report a
         * listener's exception ({@code render_error}) or, with autoRendered, that it was drawn
         * ({@code rendered}).
         */
        void deliver(String screen, Json tree, TreeMeta meta);

        /** Hand {@code sync} to the app after a random 0..jitter wait, then call {@code syncHandled(waiting)}. */
        void schedule(SyncNotification sync, SyncLedger.Waiting waiting);

        void emit(ClientEvent event);

        /** The hub has no version of the screen yet: mark it and tell the listeners; its subscription stays. */
        void pending(String screen);

        /** Write {@code key} ({@code value} null: remove it). */
        void store(String key, String value);

        /** A session started: reset the reconnect schedule, watch the link at the welcome's interval, state LIVE. */
        void goLive(Welcome welcome);

        /** Reconnecting cannot help after {@code error} (unless a token provider can give a fresh token). */
        void stopReconnecting(HubError error);
    }

    abstract void performWith(Performer performer);

    /** The values that make this action what it is (for equality and printing). */
    abstract List<Object> parts();

    @Override
    public final boolean equals(Object other) {
        return other != null && other.getClass() == getClass() && ((SessionAction) other).parts().equals(parts());
    }

    @Override
    public final int hashCode() { return parts().hashCode(); }

    @Override
    public final String toString() { return getClass().getSimpleName() + parts(); }

    static SessionAction send(Json message) { return new Send(message); }

    static SessionAction deliver(String screen, Json tree, TreeMeta meta) { return new Deliver(screen, tree, meta); }

    static SessionAction schedule(SyncNotification sync, SyncLedger.Waiting waiting) {
        return new Schedule(sync, waiting);
    }

    static SessionAction emit(ClientEvent event) { return new Emit(event); }

    static SessionAction pending(String screen) { return new Pending(screen); }

    static SessionAction store(String key, String value) { return new Store(key, value); }

    static SessionAction goLive(Welcome welcome) { return new GoLive(welcome); }

    static SessionAction stopReconnecting(HubError error) { return new StopReconnecting(error); }

    static final class Send extends SessionAction {
        final Json message;

        Send(Json message) { this.message = message; }

        @Override
        void performWith(Performer p) { p.send(message); }

        @Override
        List<Object> parts() { return Arrays.asList(message); }
    }

    static final class Deliver extends SessionAction {
        final String screen;
        final Json tree;
        final TreeMeta meta;

        Deliver(String screen, Json tree, TreeMeta meta) {
            this.screen = screen;
            this.tree = tree;
            this.meta = meta;
        }

        @Override
        void performWith(Performer p) { p.deliver(screen, tree, meta); }

        @Override
        List<Object> parts() { return Arrays.asList(screen, tree, meta); }
    }

    static final class Schedule extends SessionAction {
        final SyncNotification sync;
        final SyncLedger.Waiting waiting;

        Schedule(SyncNotification sync, SyncLedger.Waiting waiting) {
            this.sync = sync;
            this.waiting = waiting;
        }

        @Override
        void performWith(Performer p) { p.schedule(sync, waiting); }

        @Override
        List<Object> parts() { return Arrays.asList(sync); }
    }

    static final class Emit extends SessionAction {
        final ClientEvent event;

        Emit(ClientEvent event) { this.event = event; }

        @Override
        void performWith(Performer p) { p.emit(event); }

        @Override
        List<Object> parts() { return Arrays.asList(event); }
    }

    static final class Pending extends SessionAction {
        final String screen;

        Pending(String screen) { this.screen = screen; }

        @Override
        void performWith(Performer p) { p.pending(screen); }

        @Override
        List<Object> parts() { return Arrays.asList(screen); }
    }

    static final class Store extends SessionAction {
        final String key;
        final String value;

        Store(String key, String value) {
            this.key = key;
            this.value = value;
        }

        @Override
        void performWith(Performer p) { p.store(key, value); }

        @Override
        List<Object> parts() { return Arrays.asList(key, value); }
    }

    static final class GoLive extends SessionAction {
        final Welcome welcome;

        GoLive(Welcome welcome) { this.welcome = welcome; }

        @Override
        void performWith(Performer p) { p.goLive(welcome); }

        @Override
        List<Object> parts() { return Arrays.asList(welcome); }
    }

    static final class StopReconnecting extends SessionAction {
        final HubError error;

        StopReconnecting(HubError error) { this.error = error; }

        @Override
        void performWith(Performer p) { p.stopReconnecting(error); }

        @Override
        List<Object> parts() { return Arrays.asList(error); }
    }
}
