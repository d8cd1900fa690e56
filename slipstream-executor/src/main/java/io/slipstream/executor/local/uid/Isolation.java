package io.slipstream.executor.local.uid;

import io.slipstream.executor.local.process.ProcFs;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Whether instances run under uids of their own. When the server runs as root, every run gets a uid from
 * {@code [firstUid, firstUid + uidCount)} that nothing else uses, so an instance can read neither the server's
 * state (its store, the admin token) nor another run's files, and cannot signal another run's processes. A server
 * that is not root cannot switch users: instances then run as the server's user (see docs/operations.md).
 */
public record Isolation(boolean enabled, int firstUid, int uidCount) {
    public static final int DEFAULT_FIRST_UID = 200_000;

    /** How a server chooses: {@code auto} isolates when it can (root, and a data dir others may pass through). */
    public enum Mode {
        auto,
        on,
        off
    }

    public Isolation {
        if (enabled && (firstUid < 1000 || uidCount < 1 || (long) firstUid + uidCount > Integer.MAX_VALUE)) {
            throw new IllegalArgumentException("bad uid range " + firstUid + " + " + uidCount);
        }
    }

    public static Isolation off() {
        return new Isolation(false, 0, 0);
    }

    /**
     * Why instances cannot run under uids of their own with their directories under {@code dataDir}, or {@code null}
     * if they can: switching users needs root, and every directory above theirs must let other users pass.
     */
    public static String obstacle(Path dataDir) {
        if (!runningAsRoot()) {
            return "the server is not root, so it cannot run instances as other users";
        }
        for (Path dir = dataDir.toAbsolutePath().normalize(); dir != null; dir = dir.getParent()) {
            try {
                if (Files.exists(dir) && !Files.getPosixFilePermissions(dir).contains(java.nio.file.attribute.PosixFilePermission.OTHERS_EXECUTE)
                        && !dir.equals(dataDir.toAbsolutePath().normalize())) {
                    return dir + " does not let other users pass (chmod o+x " + dir + ", or put the data dir elsewhere, e.g. /var/lib/slipstream)";
                }
            } catch (IOException e) {
                return "cannot read the permissions of " + dir;
            }
        }
        return null;
    }

    public static boolean runningAsRoot() {
        return ProcFs.runningAsRoot();
    }
}
