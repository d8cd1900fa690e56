package io.slipstream.server.control;

import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.HexFormat;

/**
 * Names of leader replicas: {@code host:pid:random}, one per process start. A name of this host whose process is
 * gone names a previous start of a replica here (killed, crashed): its lease need not be waited out.
 */
final class HolderNames {
    private static final String HOST = hostName();

    private HolderNames() {
    }

    static String newName() {
        byte[] random = new byte[3];
        new SecureRandom().nextBytes(random);
        return HOST + ":" + ProcessHandle.current().pid() + ":" + HexFormat.of().formatHex(random);
    }

    /**
     * Whether {@code holder} is a replica of this host that no longer runs. A pid now reused by another process
     * reads as alive: then the lease is waited out, which is always safe. Names of other hosts are never gone.
     */
    static boolean isGone(String holder) {
        String[] parts = holder.split(":");
        if (parts.length != 3 || !parts[0].equals(HOST)) {
            return false;
        }
        try {
            long pid = Long.parseLong(parts[1]);
            return pid != ProcessHandle.current().pid() && ProcessHandle.of(pid).map(p -> !p.isAlive()).orElse(true);
        } catch (NumberFormatException e) {
            return false;
        }
    }

    static String host() {
        return HOST;
    }

    private static String hostName() {
        String host = System.getenv("HOSTNAME");
        if (host == null || host.isBlank()) {
            try {
                host = Files.readString(Path.of("/etc/hostname")).trim();
            } catch (java.io.IOException | RuntimeException e) {
                host = "localhost";
            }
        }
        return host.replace(':', '_');
    }
}
