package io.pushhub.client;

import static io.pushhub.client.Expect.equal;
import static io.pushhub.client.Expect.isTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/** FileStorage (atomic replace, key encoding) and the stored screen's corruption rule. */
final class StorageTest {
    private StorageTest() {}

    static void testFileStorageKeepsValuesAcrossInstancesAndRemovesThem() throws IOException {
        Path dir = Files.createTempDirectory("pushhub-storage-");
        FileStorage storage = new FileStorage(dir.resolve("nested"));
        equal("absent", null, storage.get("user:u42:screen:home/feed"));
        storage.put("user:u42:screen:home/feed", "{\"a\":\"ü😀\"}");
        storage.put("user:u42:screen:home/feed", "{\"a\":2}");
        equal("the last value, from a new instance", "{\"a\":2}", new FileStorage(dir.resolve("nested")).get("user:u42:screen:home/feed"));
        storage.put("user:u42:screen:home%2Ffeed", "other");
        equal("keys that differ only in encoding stay apart", "{\"a\":2}", storage.get("user:u42:screen:home/feed"));
        storage.remove("user:u42:screen:home/feed");
        storage.remove("never:there");
        equal("removed", null, storage.get("user:u42:screen:home/feed"));
        try (Stream<Path> files = Files.list(dir.resolve("nested"))) {
            List<String> names = files.map(p -> p.getFileName().toString()).collect(Collectors.toList());
            equal("one file per key, no temporary files left", List.of("user%3Au42%3Ascreen%3Ahome%252Ffeed"), names);
        }
        equal("a key that is only dots stays inside the directory", dir.resolve("nested").resolve("%2E."), storage.file(".."));
    }

    static void testAStoredScreenCutAtAnyOffsetOrWithAnyByteFlippedIsRefusedOrStillHashesRight() {
        Json tree = Json.parse("{\"type\":\"screen\",\"children\":[{\"id\":\"a\",\"text\":\"Hi ü\"}],\"n\":0.1}");
        String form = StoredScreen.form("e-1", tree.canonical(), 3, ScreenHash.of(tree), java.util.Map.of());
        byte[] bytes = form.getBytes(StandardCharsets.UTF_8);
        for (int cut = 0; cut < bytes.length; cut++) {
            equal("cut at " + cut, null, StoredScreen.parse(new String(bytes, 0, cut, StandardCharsets.UTF_8)));
        }
        for (int i = 0; i < bytes.length; i++) {
            byte[] flipped = bytes.clone();
            flipped[i] ^= 0x01;
            StoredScreen parsed = StoredScreen.parse(new String(flipped, StandardCharsets.UTF_8));
            // The one allowed outcome besides refusal: a tree that still hashes to the stored hash.
            isTrue("byte " + i + " flipped: " + parsed, parsed == null || ScreenHash.of(parsed.tree).equals(parsed.hash));
        }
        equal("intact", 3L, StoredScreen.parse(form).version);
    }

    static void testMemoryStorage() {
        MemoryStorage storage = new MemoryStorage();
        storage.put("k", "v");
        equal("kept", "v", storage.get("k"));
        storage.remove("k");
        equal("removed", null, storage.get("k"));
    }

    static void testAKeyTooLongForAFileNameIsStoredUnderItsSha256() throws IOException {
        Path dir = Files.createTempDirectory("pushhub-storage-");
        FileStorage storage = new FileStorage(dir);
        String screen = "a/".repeat(100); // 200 characters, 400 bytes percent-encoded
        String key = StorageScope.of(null, "d-0123456789abcdef").screenKey(screen);
        storage.put(key, "{\"a\":1}");
        equal("read back", "{\"a\":1}", storage.get(key));
        equal("read back by a new instance", "{\"a\":1}", new FileStorage(dir).get(key));
        StringBuilder hex = new StringBuilder();
        try {
            for (byte b : java.security.MessageDigest.getInstance("SHA-256").digest(key.getBytes(StandardCharsets.UTF_8))) {
                hex.append(String.format("%02x", b));
            }
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new AssertionError(e);
        }
        equal("named by the key's SHA-256", dir.resolve("~sha256-" + hex), storage.file(key));
        String longest = "k".repeat(200);
        equal("200 bytes encoded: still the key", dir.resolve(longest), storage.file(longest));
        equal("201: hashed", true, storage.file(longest + "k").getFileName().toString().startsWith("~sha256-"));
        storage.remove(key);
        equal("removed", null, storage.get(key));
    }
}
