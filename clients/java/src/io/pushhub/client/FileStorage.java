package io.pushhub.client;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;

/**
 * Storage in a directory of the JVM's file system (created if missing): one file per key, named
 * by the key percent-encoded (keys hold {@code /} and {@code :}; only {@code A-Z a-z 0-9 - _ .}
 * stay; a leading dot is encoded too). A key whose encoded name would be longer than
 * {@link #MAX_NAME_BYTES} (a long screen name: file systems take 255 bytes) is named
 * {@code ~sha256-} and the lowercase hex SHA-256 of its UTF-8 bytes instead; an encoded name
 * never holds {@code ~}, so the two kinds never collide. Values are stored as they are, either
 * way. Each write goes to a temporary file in the same directory that then replaces the key's
 * file atomically (rename), so a crash leaves the old value or the new one, never a torn one.
 * Thread-safe for distinct keys; the client calls it from one thread.
 */
public final class FileStorage implements ClientStorage {
    private final Path directory;

    /** @throws IOException when the directory cannot be created */
    public FileStorage(Path directory) throws IOException {
        this.directory = Files.createDirectories(directory);
    }

    public Path directory() { return directory; }

    /** The longest file name made from a key's encoding; a longer one is the key's SHA-256. */
    static final int MAX_NAME_BYTES = 200;

    /** The file of {@code key}. */
    Path file(String key) {
        // A leading dot is encoded too: no hidden files, no "." or "..".
        String name = PercentEncoding.encode(key, "-_.");
        if (name.startsWith(".")) name = "%2E" + name.substring(1);
        // The encoding is ASCII: one byte per char.
        return directory.resolve(name.length() <= MAX_NAME_BYTES ? name : hashedName(key));
    }

    private static String hashedName(String key) {
        byte[] digest;
        try {
            digest = MessageDigest.getInstance("SHA-256").digest(key.getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java platform has SHA-256", e);
        }
        StringBuilder name = new StringBuilder("~sha256-");
        for (byte b : digest) {
            name.append(Character.forDigit((b >> 4) & 0xf, 16)).append(Character.forDigit(b & 0xf, 16));
        }
        return name.toString();
    }

    @Override
    public String get(String key) throws IOException {
        try {
            return new String(Files.readAllBytes(file(key)), StandardCharsets.UTF_8);
        } catch (NoSuchFileException absent) {
            return null;
        }
    }

    @Override
    public void put(String key, String value) throws IOException {
        Path target = file(key);
        Path temporary = Files.createTempFile(directory, ".tmp-", ".part");
        try {
            Files.write(temporary, value.getBytes(StandardCharsets.UTF_8));
            try {
                Files.move(temporary, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            } catch (AtomicMoveNotSupportedException e) {
                Files.move(temporary, target, StandardCopyOption.REPLACE_EXISTING);
            }
        } finally {
            Files.deleteIfExists(temporary);
        }
    }

    @Override
    public void remove(String key) throws IOException {
        Files.deleteIfExists(file(key));
    }
}
