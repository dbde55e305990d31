package com.example.pushhub;

import android.content.Context;

/** Where the example gets its JWT: a real app has it from its own sign-in (its backend signs it with the hub's secret). */
final class Session {
    private Session() {}

    static String jwt(Context context) {
        return context.getSharedPreferences("auth", Context.MODE_PRIVATE).getString("jwt", "");
    }
}
