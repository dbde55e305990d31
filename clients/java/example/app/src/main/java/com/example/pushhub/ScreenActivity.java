package com.example.pushhub;

import android.app.Activity;
import android.os.Bundle;
import android.os.Handler;
import android.os.Looper;
import android.util.Log;
import android.view.View;
import android.widget.FrameLayout;
import android.widget.TextView;
import io.pushhub.client.ClientListener;
import io.pushhub.client.CloseEvent;
import io.pushhub.client.ConnectionState;
import io.pushhub.client.HubError;
import io.pushhub.client.PushHub;
import io.pushhub.client.Subscription;
import io.pushhub.client.okhttp.OkHttpTransport;
import java.net.URI;
import java.util.HashMap;
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
        String jwt = Session.jwt(this);
        if (jwt == null) {
            // Signed out: .token() needs a JWT. A real app shows its sign-in here (or, on a hub
            // in --allow-anonymous mode, connects with .device(id) instead).
            TextView signIn = new TextView(this);
            signIn.setText("Sign in to see this screen");
            root.addView(signIn);
            return;
        }
        Handler main = new Handler(Looper.getMainLooper());
        TreeRenderer renderer = new TreeRenderer(this);
        // Every type TreeRenderer draws, with the version it draws (no Map.of: Android API 30+).
        Map<String, Integer> components = new HashMap<>();
        for (String type : new String[] {"screen", "column", "row", "text", "button", "image"}) components.put(type, 1);
        hub = new PushHub(PushHub.options(URI.create("wss://hub.example.com/v1/connect"))
                .token(jwt)                                        // the app's sign-in (sub = the user)
                .app("android", BuildConfig.VERSION_NAME)
                .storage(new SharedPreferencesStorage(this, "pushhub"))
                .components(components)
                .transport(new OkHttpTransport(HTTP))              // required on Android: no java.net.http there
                .listenerExecutor(main::post)                      // listeners on the main thread: views are safe
                .build());
        // Runs on the main thread. A throw (UnknownComponent) is reported as a render_error and
        // leaves the screen drawn before it: the new views replace the old only once built.
        home = hub.subscribe("home", (tree, meta) -> {
            View drawn = renderer.render(tree);
            root.removeAllViews();
            root.addView(drawn);
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
        if (home != null) home.close();
        if (hub != null) hub.close();
        super.onDestroy();
    }
}
