package io.pushhub.client;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;

/** Where the repository is, for tests that read its files or run its tools. */
final class RepoRoot {
    private RepoRoot() {}

    private static final String MARK = "clients/java/src/io/pushhub/client/Json.java";

    /** The system property {@code pushhub.root}, else the nearest folder at or above the working directory holding this library. */
    static Path get() {
        String given = System.getProperty("pushhub.root");
        if (given != null) return Paths.get(given);
        Path here = Paths.get("").toAbsolutePath();
        for (Path folder = here; folder != null; folder = folder.getParent()) {
            if (Files.isRegularFile(folder.resolve(MARK))) return folder;
        }
        throw new AssertionError("no repository at or above " + here + "; set -Dpushhub.root=REPO");
    }
}
