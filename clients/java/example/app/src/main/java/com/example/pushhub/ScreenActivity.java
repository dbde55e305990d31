package com.example.pushhub;

import android.app.Activity;
import android.os.Bundle;
import android.os.Handler;
import android.os.Looper;
import android.util.Log;
import android.widget.FrameLayout;
import io.pushhub.client.ClientListener;
import io.pushhub.client.CloseEvent;
import io.pushhub.client.ConnectionState;
import io.pushhub.client.HubError;
import io.pushhub.client.PushHub;
import io.pushhub.client.Subscription;
import io.pushhub.client.okhttp.OkHttpTransport;
import java.net.URI;
import java.util.Map;
import okhttp3.OkHttpClient;

/**
 * Follows the screen "home" and draws it as native views. The client lives as long as the
 * activity: created in onCreate, closed in onDestroy (a real app keeps one client per process,
 * e.g. in its Application, and subscribes per screen).
 */
public final class ScreenActivity extends Activity {
    private static final String TAG = "PushHub";
    /** One OkHttpClient per app: the transport shares its connection pool and TLS settings. */
    private static final OkHttpClient HTTP = new OkHttpClient();

    private PushHub hub;
    private Subscription home;
    private FrameLayout root;

    @Override
    protected void onCreate(Bundle saved) {
        super.onCreate(saved);
        root = new FrameLayout(this);
        setContentView(root);
        Handler main = new Handler(Looper.getMainLooper());
        TreeRenderer renderer = new TreeRenderer(this);
        hub = new PushHub(PushHub.options(URI.create("wss://hub.example.com/v1/connect"))
                .token(Session.jwt(this))                          // the app's sign-in (sub = the user)
                .app("android", BuildConfig.VERSION_NAME)
                .storage(new SharedPreferencesStorage(this, "pushhub"))
                .components(Map.of("column", 1, "row", 1, "text", 1, "button", 1, "image", 1))
                .transport(new OkHttpTransport(HTTP))
                .listenerExecutor(main::post)                      // listeners on the main thread: views are safe
                .build());
        // Runs on the main thread. A throw (UnknownComponent) is reported as a render_error.
        home = hub.subscribe("home", (tree, meta) -> {
            root.removeAllViews();
            root.addView(renderer.render(tree));
            Log.d(TAG, "home v" + meta.version() + " (" + meta.source() + ")");
        });
        hub.onSync(sync -> {
            // Content-free: refetch what `scope` names (after the random jitter wait; acked on return).
            if (sync.scope().equals("bundle")) Log.i(TAG, "refresh the bundle: " + sync.reason());
        });
        hub.addListener(new ClientListener() {
            @Override
            public void onState(ConnectionState state) { Log.d(TAG, "state " + state); }

            @Override
            public void onClose(CloseEvent close) { Log.d(TAG, "closed " + close); }

            @Override
            public void onError(HubError error) { Log.w(TAG, "hub error " + error); }
        });
    }

    @Override
    protected void onDestroy() {
        home.close();
        hub.close();
        super.onDestroy();
    }
}
