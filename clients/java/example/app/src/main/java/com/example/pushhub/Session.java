package com.example.pushhub;

import android.content.Context;

/** Where the example gets its JWT: a real app has it from its own sign-in (its backend signs it with the hub's secret). */
final class Session {
    private Session() {}

    /** The signed-in user's JWT, or {@code null} when nobody is signed in. */
    static String jwt(Context context) {
        String jwt = context.getSharedPreferences("auth", Context.MODE_PRIVATE).getString("jwt", null);
        return jwt == null || jwt.isEmpty() ? null : jwt;
    }
}
