package io.pushhub.client;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;

/** Storage for one process's lifetime (the default; tests). Thread-safe. */
public final class MemoryStorage implements ClientStorage {
    private final ConcurrentMap<String, String> values = new ConcurrentHashMap<>();

    @Override
    public String get(String key) { return values.get(key); }

    @Override
    public void put(String key, String value) { values.put(key, value); }

    @Override
    public void remove(String key) { values.remove(key); }
}
