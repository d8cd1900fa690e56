package io.slipstream.server.control;

import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.HexFormat;

/**
 * Names of leader replicas: {@code host:pid:random}, one per process start. A name of this host whose process is
 * gone names a previous start of a replica here (killed, crashed): its lease need not be waited out. "This host" is
 * the host name with a tag of the boot and the pid namespace ({@code name~1a2b3c4d}): containers that share a host
 * name (Kubernetes hostNetwork, docker --network host) or machines of the same name see each other's pids as not
 * running, and without the tag each took a live leader's lease at once, over and over.
 */
final class HolderNames {
    private static final String HOST = hostName() + "~" + pidSpace();

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

    /** Which pids this process can see: its machine's boot and its pid namespace (the same for every process that sees the same pids). */
    private static String pidSpace() {
        String boot;
        String namespace;
        try {
            boot = Files.readString(Path.of("/proc/sys/kernel/random/boot_id")).trim();
            namespace = Files.readSymbolicLink(Path.of("/proc/self/ns/pid")).toString();
        } catch (java.io.IOException | RuntimeException e) {
            // Unknown: a random tag, so that no other process's name is ever read as this host's (leases are waited out).
            byte[] random = new byte[4];
            new SecureRandom().nextBytes(random);
            return "x" + HexFormat.of().formatHex(random);
        }
        try {
            byte[] digest = java.security.MessageDigest.getInstance("SHA-256").digest((boot + "/" + namespace).getBytes(java.nio.charset.StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(digest, 0, 4);
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
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
        return host.replace(':', '_').replace('~', '_');
    }
}
