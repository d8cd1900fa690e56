package io.slipstream.executor.local;

import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.function.Predicate;

/**
 * Where a stored handle's instance directory is, under the executor's root as it is now. Handles name their directory
 * relative to the root, so a data directory moved or restored elsewhere keeps its instances. Handles written before
 * that name an absolute path: one under the root is used as it is; one outside it (the data directory was moved) is
 * looked for where the instance's id puts it under the current root. A directory that cannot be found is a reason to
 * report the instance lost, never one to wait for it.
 */
sealed interface InstanceLocation {
    /** The directory is here; {@code moved}: the handle named another place (an absolute path outside the root). */
    record Found(Path dir, boolean moved) implements InstanceLocation {
    }

    /** No directory of the instance can be found: why, for the report that the instance is lost. */
    record Missing(String reason) implements InstanceLocation {
    }

    /**
     * @param root        the executor's root, absolute and normalized
     * @param stored      the handle's {@code dir}, or {@code null}
     * @param byId        where the instance's id puts its directory under {@code root}
     * @param isDirectory whether a path is a directory (looked at only for an absolute handle outside the root)
     */
    static InstanceLocation of(Path root, String stored, Path byId, Predicate<Path> isDirectory) {
        if (stored == null || stored.isEmpty()) {
            return new Missing("its handle names no directory");
        }
        Path path;
        try {
            path = Path.of(stored);
        } catch (InvalidPathException e) {
            return new Missing("its handle names no valid directory (" + e.getMessage() + ")");
        }
        Path dir = root.resolve(path).normalize();
        if (dir.startsWith(root) && !dir.equals(root)) {
            return new Found(dir, false);
        }
        if (!path.isAbsolute()) {
            return new Missing("its directory " + stored + " leads out of " + root);
        }
        if (isDirectory.test(byId)) {
            return new Found(byId, true);
        }
        return new Missing("its directory " + dir + " is outside " + root + " and nothing is at " + byId
                + " (was the data directory moved or restored without its instances?)");
    }
}
