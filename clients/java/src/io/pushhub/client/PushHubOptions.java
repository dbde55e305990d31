package io.pushhub.client;

import java.net.URI;
import java.util.Collections;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Executor;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.DoubleSupplier;
import java.util.function.Supplier;

/**
 * How a {@link PushHub} connects and behaves; made by {@link PushHub#options(URI)}:
 * <pre>
 * PushHubOptions options = PushHub.options(URI.create("wss://hub.example.com/v1/connect"))
 *         .token(jwt)                       // or .tokenProvider(() -> fresh()), or .device("d-…") in dev
 *         .app("android", "5.3.0")
 *         .storage(new FileStorage(dir))    // default: MemoryStorage
 *         .components(Map.of("Carousel", 2, "Text", 1))
 *         .listenerExecutor(mainThread)     // default: one thread of the client's
 *         .build();
 * </pre>
 * Immutable; the builder checks each value when it is set and throws an
 * {@link IllegalArgumentException} that says what is wrong (a programming error: nothing bad
 * ever reaches the hub).
 */
public final class PushHubOptions {
    final URI uri;
    final String token;
    final Supplier<String> tokenProvider;
    final String device;
    final String platform;
    final String appVersion;
    final ClientStorage storage;
    final Map<String, Integer> components;
    final Executor listenerExecutor;
    final Transport transport;
    final Backoff backoff;
    final long goingAwayCapMs;
    final long goingAwayWindowMs;
    final boolean autoRendered;
    final boolean waitsForJitter;
    final DoubleSupplier random;

    private PushHubOptions(Builder b) {
        uri = b.uri;
        token = b.token;
        tokenProvider = b.tokenProvider;
        device = b.device;
        platform = b.platform;
        appVersion = b.appVersion;
        storage = b.storage != null ? b.storage : new MemoryStorage();
        components = b.components;
        listenerExecutor = b.listenerExecutor;
        transport = b.transport != null ? b.transport : DefaultTransport.create();
        backoff = b.backoff;
        goingAwayCapMs = b.goingAwayCapMs;
        goingAwayWindowMs = b.goingAwayWindowMs;
        autoRendered = b.autoRendered;
        waitsForJitter = b.waitsForJitter;
        random = b.random;
    }

    public URI uri() { return uri; }

    /** Builds {@link PushHubOptions}; not thread-safe (build on one thread). */
    public static final class Builder {
        private final URI uri;
        private String token;
        private Supplier<String> tokenProvider;
        private String device;
        private String platform;
        private String appVersion;
        private ClientStorage storage;
        private Map<String, Integer> components;
        private Executor listenerExecutor;
        private Transport transport;
        private Backoff backoff = Backoff.DEFAULT;
        private long goingAwayCapMs = 4_000;
        private long goingAwayWindowMs = 60_000;
        private boolean autoRendered = true;
        private boolean waitsForJitter = true;
        private DoubleSupplier random = () -> ThreadLocalRandom.current().nextDouble();

        Builder(URI uri) {
            String scheme = uri.getScheme();
            if (!"ws".equalsIgnoreCase(scheme) && !"wss".equalsIgnoreCase(scheme)) {
                throw new IllegalArgumentException(
                        "PushHub needs a ws:// or wss:// URI such as wss://host/v1/connect, got " + uri);
            }
            this.uri = uri;
        }

        /** Signs in with a JWT (DESIGN §3): its {@code sub} is the user, whose storage scope the client uses. */
        public Builder token(String jwt) {
            this.token = requireText("token", jwt);
            return this;
        }

        /**
         * Asks {@code provider} for a fresh JWT before every connection (refresh it there); a
         * token naming another user switches the storage scope. {@code null} from it keeps the
         * current user. With a provider, {@code unauthorized} does not end the client: the next
         * attempt asks again.
         *
         * <p>It is called on the client's state thread (before each connection and each
         * {@link PushHub#fetchScreen}), which does nothing else meanwhile: it must return at once,
         * a token the app keeps (refreshed elsewhere, ahead of its expiry), never wait on the
         * network or a lock. When no user is signed in, return {@code null} (what an exception
         * does too, reported as a {@code token} error).
         */
        public Builder tokenProvider(Supplier<String> provider) {
            if (provider == null) throw new IllegalArgumentException("tokenProvider: null");
            this.tokenProvider = provider;
            return this;
        }

        /**
         * The device id: the anonymous unit (hubs in dev or {@code --allow-anonymous} mode), or,
         * with a token, the device shown in {@code /v1/clients}. Without a token or a device the
         * client generates one id, kept in storage.
         */
        public Builder device(String id) {
            this.device = requireText("device", id);
            return this;
        }

        /** The app as {@code hello.app} describes it (targeting, capability filter): {@code ("android", "5.3.0")}. */
        public Builder app(String platform, String version) {
            this.platform = requireText("platform", platform);
            this.appVersion = requireText("version", version);
            return this;
        }

        /** Where trees, {@code last_sync} and the device id are kept (default: {@link MemoryStorage}). */
        public Builder storage(ClientStorage storage) {
            if (storage == null) throw new IllegalArgumentException("storage: null");
            this.storage = storage;
            return this;
        }

        /**
         * The components this build renders, each with the highest version it renders (DESIGN
         * §16), declared in every hello: {@code Map.of("Carousel", 2, "Text", 1)}. The hub sends
         * a node's {@code fallback} (or nothing) for a registered component missing here. Not set
         * (the default): the hub uses the profile registered for the app's version.
         */
        public Builder components(Map<String, Integer> components) {
            String problem = components == null ? "null" : ComponentCapabilities.problem(components);
            if (problem != null) {
                throw new IllegalArgumentException("components must map each component name to the highest version "
                        + "this app renders, e.g. {Carousel=2, Text=1}: " + problem);
            }
            this.components = Collections.unmodifiableMap(new TreeMap<>(components));
            return this;
        }

        /**
         * Where listeners (trees, syncs, events) are called, one at a time in order as long as the
         * executor runs tasks in order: Android's main thread ({@code new Handler(Looper.getMainLooper())::post}).
         * Default: a single thread of the client's.
         */
        public Builder listenerExecutor(Executor executor) {
            if (executor == null) throw new IllegalArgumentException("listenerExecutor: null");
            this.listenerExecutor = executor;
            return this;
        }

        /**
         * The WebSocket implementation. Default on the JVM: {@link JdkWebSocketTransport} with
         * the JVM's trust store. Android has no default ({@code java.net.http} is missing there):
         * pass {@code new OkHttpTransport(okHttpClient)}, else {@link #build()} throws an
         * {@link IllegalStateException} saying so.
         */
        public Builder transport(Transport transport) {
            if (transport == null) throw new IllegalArgumentException("transport: null");
            this.transport = transport;
            return this;
        }

        /** Reconnect delays (default 0.5 s doubling to 30 s, full jitter). */
        public Builder backoff(Backoff backoff) {
            if (backoff == null) throw new IllegalArgumentException("backoff: null");
            this.backoff = backoff;
            return this;
        }

        /**
         * After a close 1001 (the hub restarts) the schedule starts over and, for {@code windowMs},
         * its ceiling stops at {@code capMs} (default 4 s for 60 s).
         */
        public Builder goingAway(long capMs, long windowMs) {
            if (capMs <= 0 || windowMs < 0) {
                throw new IllegalArgumentException("goingAway: needs capMs > 0, windowMs >= 0");
            }
            this.goingAwayCapMs = capMs;
            this.goingAwayWindowMs = windowMs;
            return this;
        }

        /**
         * Send {@code rendered} once the tree listeners for a version returned (default true). A
         * listener that throws sends a {@code render_error} instead, whatever this says.
         */
        public Builder autoRendered(boolean on) {
            this.autoRendered = on;
            return this;
        }

        /** Wait the random 0..jitter_ms before handing a sync over (default true: it spreads a fleet's re-fetches). */
        public Builder waitsForJitter(boolean on) {
            this.waitsForJitter = on;
            return this;
        }

        /** Uniform numbers in [0, 1) for the backoff and the sync jitter (tests fix one). */
        public Builder random(DoubleSupplier random) {
            if (random == null) throw new IllegalArgumentException("random: null");
            this.random = random;
            return this;
        }

        /**
         * @throws IllegalArgumentException for a token and a token provider both
         * @throws IllegalStateException when no transport was given and there is no default (Android)
         */
        public PushHubOptions build() {
            if (token != null && tokenProvider != null) {
                throw new IllegalArgumentException("token and tokenProvider: give one of them");
            }
            return new PushHubOptions(this);
        }

        private static String requireText(String what, String value) {
            if (value == null || value.isEmpty()) throw new IllegalArgumentException(what + ": empty");
            return value;
        }
    }
}
