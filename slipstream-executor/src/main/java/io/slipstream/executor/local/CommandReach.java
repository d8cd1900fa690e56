package io.slipstream.executor.local;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.util.Optional;
import java.util.Set;

/**
 * Whether a run's own uid can reach the command it is to start. A command looked up through an inherited PATH may be
 * found only in a directory the server's user reaches and the run's uid does not ({@code /root/.pyenv/shims} under a
 * {@code 0700} home): the process would fail with exit 126 and no hint, so the launch says which directory it is.
 * Permissive where in doubt: a directory its group may enter counts as reachable (the run's uid may be in that group),
 * so a launch that would work is never refused.
 */
final class CommandReach {
    private CommandReach() {
    }

    /**
     * Why {@code uid} cannot start {@code command} as {@code path} finds it, or empty when it can (or when the command
     * is not on the path at all, or names a file: the process reports those itself).
     */
    static Optional<String> problem(String command, String path, int uid) {
        if (command.isEmpty() || command.contains("/") || path == null) {
            return Optional.empty();
        }
        String blocked = null;
        for (String entry : path.split(":", -1)) {
            if (entry.isEmpty() || !entry.startsWith("/")) {
                continue; // relative entries depend on the working directory: not judged here
            }
            Path candidate = Path.of(entry).resolve(command);
            PosixFileAttributes file = attributes(candidate);
            if (file == null || !file.isRegularFile()) {
                continue;
            }
            String where = unreachable(candidate, file, uid);
            if (where == null) {
                return Optional.empty(); // found where the uid may run it (a later entry than a blocked one works too)
            }
            if (blocked == null) {
                blocked = "command '" + command + "' is found on the PATH only as " + candidate + ", which the run's uid " + uid + " cannot reach ("
                        + where + "); install it where every user may run it (e.g. /usr/local/bin), or set PATH in the job's env";
            }
        }
        return Optional.ofNullable(blocked);
    }

    /** What keeps {@code uid} from running {@code file}: a directory above it it may not enter, or the file itself; null if nothing. */
    private static String unreachable(Path candidate, PosixFileAttributes file, int uid) {
        for (Path dir = candidate.getParent(); dir != null; dir = dir.getParent()) {
            PosixFileAttributes attributes = attributes(dir);
            if (attributes == null) {
                return dir + " cannot be read";
            }
            if (!mayUse(attributes, dir, uid)) {
                return dir + " is " + perms(attributes) + ", owned by " + attributes.owner().getName();
            }
        }
        return mayUse(file, candidate, uid) ? null : candidate + " is " + perms(file) + ", owned by " + file.owner().getName();
    }

    private static boolean mayUse(PosixFileAttributes attributes, Path path, int uid) {
        Set<PosixFilePermission> permissions = attributes.permissions();
        if (permissions.contains(PosixFilePermission.OTHERS_EXECUTE) || permissions.contains(PosixFilePermission.GROUP_EXECUTE)) {
            return true;
        }
        return permissions.contains(PosixFilePermission.OWNER_EXECUTE) && ownerUid(path) == uid;
    }

    private static int ownerUid(Path path) {
        try {
            return (Integer) Files.getAttribute(path, "unix:uid", LinkOption.NOFOLLOW_LINKS);
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }

    private static String perms(PosixFileAttributes attributes) {
        return java.nio.file.attribute.PosixFilePermissions.toString(attributes.permissions());
    }

    /** Follows links, as the lookup does; {@code null} if it is not there or cannot be read. */
    private static PosixFileAttributes attributes(Path path) {
        try {
            return Files.readAttributes(path, PosixFileAttributes.class);
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }
}
