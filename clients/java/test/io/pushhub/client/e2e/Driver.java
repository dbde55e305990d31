package io.pushhub.client.e2e;

import io.pushhub.client.Backoff;
import io.pushhub.client.ClientListener;
import io.pushhub.client.CloseEvent;
import io.pushhub.client.FetchException;
import io.pushhub.client.ConnectionState;
import io.pushhub.client.FileStorage;
import io.pushhub.client.Gone;
import io.pushhub.client.HubError;
import io.pushhub.client.JdkWebSocketTransport;
import io.pushhub.client.PushToken;
import io.pushhub.client.Json;
import io.pushhub.client.Mismatch;
import io.pushhub.client.PushHub;
import io.pushhub.client.PushHubOptions;
import io.pushhub.client.RenderErrorDescribing;
import io.pushhub.client.Resubscribe;
import io.pushhub.client.ScreenHash;
import io.pushhub.client.Subscription;
import io.pushhub.client.Transport;
import io.pushhub.client.Welcome;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Paths;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The Java client driven by Tests/EndToEnd/test_java_client.py against a real hub: commands come
 * on stdin, one JSON object a line; events go to stdout, one JSON object a line (written under a
 * lock, so lines never interleave). The test holds the hub and checks what the client saw.
 * <pre>
 * {"cmd":"start","url":"ws://…/v1/connect","device":"d-1"|"token":"…","storage":"/dir","transport":"jdk"|"okhttp",
 *  "ca":"/cert.pem","random":0.25,"backoff":[200,1000]}
 * {"cmd":"subscribe","screen":"home","fail_version":3}     a listener that throws for that version
 * {"cmd":"fetch","screen":"home"}   fetchScreen: a "fetched" or "fetch_error" event
 * {"cmd":"track","name":"purchase","value":12.5}
 * {"cmd":"drop"}   the connection ends as in a network drop (1006)
 * {"cmd":"push_token","token":"fcm-token"|null}   {"cmd":"push","data":{"pushhub":"…"}} (events pushed, push_handled)
 * {"cmd":"unsubscribe","screen":"home"}  {"cmd":"tamper","field":"hash"|"from"}  {"cmd":"stats"}  {"cmd":"close"}
 * </pre>
 * Events: {@code tree} (version, hash, source, canonical: what the client holds, computed_hash:
 * its own hash of it), {@code state}, {@code welcome}, {@code close}, {@code error},
 * {@code resubscribe}, {@code mismatch}, {@code pending}, {@code gone}, {@code sync}, {@code stats}.
 */
public final class Driver {
    private static final Object OUT = new Object();
    private static PushHub hub;
    private static TamperingTransport tampering;
    private static final Map<String, Subscription> subscriptions = new HashMap<>();

    private Driver() {}

    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String line; (line = in.readLine()) != null;) {
            if (line.isBlank()) continue;
            Json command = Json.parse(line);
            switch (command.get("cmd").asString()) {
                case "start":
                    start(command);
                    break;
                case "subscribe":
                    subscribe(command);
                    break;
                case "unsubscribe":
                    subscriptions.remove(command.get("screen").asString()).close();
                    break;
                case "fetch":
                    fetch(command.get("screen").asString());
                    break;
                case "track":
                    hub.track(command.get("name").asString(), command.get("value") == null ? null : command.get("value").asDouble());
                    break;
                case "drop":
                    tampering.drop();
                    break;
                case "tamper":
                    tampering.tamperNext(command.get("field").asString());
                    break;
                case "push_token":
                    hub.setPushToken(command.get("token") == null || command.get("token").kind() == Json.Kind.NULL ? null
                            : PushToken.fcm(command.get("token").asString()));
                    break;
                case "push": {
                    Map<String, String> data = new HashMap<>();
                    for (Map.Entry<String, Json> e : command.get("data").members().entrySet()) {
                        data.put(e.getKey(), e.getValue().asString());
                    }
                    boolean ours = hub.handlePush(data, () -> print("push_handled"));
                    print("pushed", "ours", ours);
                    break;
                }
                case "stats":
                    print("stats", "state", hub.state().name(), "last_sync", hub.lastSync(), "stats",
                            Json.parse(hub.stats().toString()));
                    break;
                case "close":
                    hub.close();
                    break;
                default:
                    print("error", "code", "driver", "message", "unknown command " + line);
            }
        }
        if (hub != null) hub.close();
        Thread.sleep(300); // let the close frame go out
    }

    private static void start(Json c) throws Exception {
        PushHubOptions.Builder options = PushHub.options(URI.create(c.get("url").asString())).app("android", "5.3.0");
        if (c.get("token") != null) options.token(c.get("token").asString());
        if (c.get("device") != null) options.device(c.get("device").asString());
        if (c.get("storage") != null) options.storage(new FileStorage(Paths.get(c.get("storage").asString())));
        if (c.get("random") != null) {
            double r = c.get("random").asDouble();
            options.random(() -> r);
        }
        if (c.get("backoff") != null) {
            options.backoff(new Backoff(c.get("backoff").get(0).asLong(), c.get("backoff").get(1).asLong()));
        }
        String ca = c.get("ca") == null ? null : c.get("ca").asString();
        Transport transport;
        if (c.get("transport") != null && c.get("transport").asString().equals("okhttp")) {
            transport = OkHttpTransports.make(ca);
        } else {
            transport = new JdkWebSocketTransport(ca == null ? null : TestCertificates.trusting(ca));
        }
        tampering = new TamperingTransport(transport);
        options.transport(tampering);
        hub = new PushHub(options.build());
        hub.addListener(new Events());
        hub.onSync(sync -> print("sync", "id", sync.id(), "seq", sync.seq(), "scope", sync.scope(), "reason",
                sync.reason(), "jitter_ms", sync.jitterMs(), "delay_ms", sync.delayMs()));
        print("started");
    }

    private static void subscribe(Json c) {
        String screen = c.get("screen").asString();
        long failVersion = c.get("fail_version") == null ? -1 : c.get("fail_version").asLong();
        subscriptions.put(screen, hub.subscribe(screen, (tree, meta) -> {
            print("tree", "screen", screen, "version", meta.version(), "hash", meta.hash(), "source",
                    meta.source().name().toLowerCase(java.util.Locale.ROOT), "canonical", tree.canonical(),
                    "computed_hash", ScreenHash.of(tree), "variants", Json.parse(variantsJson(meta.variants())));
            if (meta.version() == failVersion) throw new CarouselFailed();
        }));
    }

    private static void fetch(String screen) {
        hub.fetchScreen(screen).whenComplete((fetched, failure) -> {
            if (failure != null) {
                FetchException e = (FetchException) (failure instanceof FetchException ? failure : failure.getCause());
                print("fetch_error", "screen", screen, "code", e.code(), "status", e.status(), "message", e.getMessage());
            } else {
                print("fetched", "screen", screen, "status", fetched.status(), "version", fetched.version(), "hash",
                        fetched.hash(), "canonical", fetched.tree().canonical());
            }
        });
    }

    private static String variantsJson(Map<String, String> variants) {
        Map<String, Json> members = new LinkedHashMap<>();
        variants.forEach((k, v) -> members.put(k, Json.of(v)));
        return Json.object(members).toString();
    }

    /** What a broken drawing of a Carousel throws. */
    private static final class CarouselFailed extends Exception implements RenderErrorDescribing {
        private static final long serialVersionUID = 1L;

        CarouselFailed() { super("slide 2 has no image"); }

        @Override
        public String component() { return "Carousel"; }
    }

    /** Prints every client event. */
    private static final class Events implements ClientListener {
        @Override
        public void onState(ConnectionState state) { print("state", "state", state.name()); }

        @Override
        public void onWelcome(Welcome w) {
            print("welcome", "session", w.session(), "user", w.user(), "epoch", w.epoch(), "sync_seq", w.syncSeq(),
                    "heartbeat_s", w.heartbeatSeconds());
        }

        @Override
        public void onClose(CloseEvent c) {
            print("close", "code", c.code(), "reason", c.reason(), "retry_in_ms", c.retryInMs(), "attempt", c.attempt(),
                    "error", c.error() == null ? null : c.error().code());
        }

        @Override
        public void onError(HubError e) {
            print("error", "code", e.code(), "message", e.message(), "ref", e.ref(), "screen", e.screen());
        }

        @Override
        public void onResubscribe(Resubscribe r) {
            print("resubscribe", "screen", r.screen(), "reason", r.reason().wireName(), "held", r.held(), "from", r.from(),
                    "version", r.version());
        }

        @Override
        public void onMismatch(Mismatch m) {
            print("mismatch", "screen", m.screen(), "version", m.version(), "source", m.source().name());
        }

        @Override
        public void onGone(Gone g) { print("gone", "screen", g.screen()); }

        @Override
        public void onPending(String screen) { print("pending", "screen", screen); }
    }

    /** One event line: {@code {"event":…, "at_ms":…, key: value, …}}. */
    static void print(String event, Object... keysAndValues) {
        Map<String, Json> members = new LinkedHashMap<>();
        members.put("event", Json.of(event));
        members.put("at_ms", Json.of((double) System.currentTimeMillis()));
        for (int i = 0; i < keysAndValues.length; i += 2) {
            Object value = keysAndValues[i + 1];
            Json json = value == null ? Json.NULL
                    : value instanceof Json ? (Json) value
                    : value instanceof Number ? Json.of(((Number) value).doubleValue())
                    : value instanceof Boolean ? Json.of((Boolean) value)
                    : Json.of(value.toString());
            members.put((String) keysAndValues[i], json);
        }
        String line = Json.object(members).toString();
        synchronized (OUT) {
            System.out.println(line);
            System.out.flush();
        }
    }
}
