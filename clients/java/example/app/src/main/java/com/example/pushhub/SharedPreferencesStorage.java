package com.example.pushhub;

import android.content.Context;
import android.content.SharedPreferences;
import io.pushhub.client.ClientStorage;

/**
 * The client's storage on SharedPreferences: trees, version and hash per screen, last_sync and
 * the hub state per user. {@code commit()} (synchronous) because the client calls storage on its
 * own background thread and counts on a write being done when the call returns; never called on
 * the main thread.
 */
final class SharedPreferencesStorage implements ClientStorage {
    private final SharedPreferences preferences;

    SharedPreferencesStorage(Context context, String name) {
        preferences = context.getSharedPreferences(name, Context.MODE_PRIVATE);
    }

    @Override
    public String get(String key) {
        return preferences.getString(key, null);
    }

    @Override
    public void put(String key, String value) {
        preferences.edit().putString(key, value).commit();
    }

    @Override
    public void remove(String key) {
        preferences.edit().remove(key).commit();
    }
}
