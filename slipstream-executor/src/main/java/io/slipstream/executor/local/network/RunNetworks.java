package io.slipstream.executor.local.network;

import io.slipstream.api.run.RunId;
import io.slipstream.executor.ExecutorException;
import io.slipstream.executor.local.files.Redirects;
import io.slipstream.executor.local.files.SafeFiles;
import io.slipstream.executor.local.files.SystemCommand;
import io.slipstream.executor.local.process.ProcFs;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One network namespace per run with {@code network: Private} ({@code /run/netns/slipstream-<hash>}, made with
 * {@code ip netns}): loopback only, shared by every instance of the run, so its ranks reach each other on
 * {@code 127.0.0.1} and the ports in their metadata, and nothing outside the run reaches them or is reached by them.
 * The API is the one way out: a forwarder in the namespace ({@code socat}, as {@code nobody}, after binding
 * {@code 127.0.0.1:80}, a port no process of a run's uid may bind) relays to the server's {@link ApiRelay} socket;
 * instances find it in {@code SLIPSTREAM_SERVER}.
 *
 * <p>The namespace and its forwarder outlive a restart of the server (instances are adopted with them) and go when the
 * run is forgotten ({@link #remove}): whatever still runs in the namespace is killed first.
 */
public final class RunNetworks {
    private static final Logger LOG = LoggerFactory.getLogger(RunNetworks.class);
    private static final Path NAMESPACES = Path.of("/run/netns");
    /** The forwarder's port inside each run's network: below 1024, so no workload can take it first. */
    static final int API_PORT = 80;
    private static final Duration COMMAND_TIMEOUT = Duration.ofSeconds(20);
    /** Connections to the API one run's forwarder relays at once. */
    static final int MAX_CONNECTIONS_PER_RUN = 32;
    private static final Duration FORWARDER_START = Duration.ofSeconds(5);

    private final Path root;
    private final Path state;
    private final ApiRelay relay;

    /** @param root the instances' root: the relay's socket and the forwarders' pid files go below it */
    public RunNetworks(Path root) throws IOException {
        this.root = root;
        this.state = root.resolve(".networks");
        Files.createDirectories(state);
        Files.setPosixFilePermissions(state, PosixFilePermissions.fromString("rwx------"));
        this.relay = new ApiRelay(root.resolve(".api.sock"));
        try {
            relay.start(); // for the networks of runs adopted after a restart
        } catch (IOException e) {
            LOG.warn("cannot listen on the API relay's socket: {}", e.toString());
        }
    }

    /** What this machine lacks for private networks (tools), or {@code null}. */
    public static String missingTools() {
        List<String> missing = new java.util.ArrayList<>();
        for (String tool : List.of("/usr/sbin/ip", "/usr/bin/nsenter", "/usr/bin/socat")) {
            if (!Files.isExecutable(Path.of(tool)) && !Files.isExecutable(Path.of(tool.replace("/usr/sbin/", "/sbin/")))) {
                missing.add(Path.of(tool).getFileName().toString());
            }
        }
        return missing.isEmpty() ? null : String.join(", ", missing);
    }

    /**
     * The run's network, made if it is not there, with its forwarder running.
     *
     * @param server the API's address ({@code SLIPSTREAM_SERVER}), or {@code null} if instances get none
     * @return the namespace's file, to enter with {@code nsenter --net=}
     */
    public synchronized Path ensure(RunId run, String server) throws IOException {
        String name = nameOf(run);
        Path namespace = NAMESPACES.resolve(name);
        if (!Files.exists(namespace, LinkOption.NOFOLLOW_LINKS)) {
            SystemCommand.Result added = SystemCommand.run(List.of("ip", "netns", "add", name), COMMAND_TIMEOUT);
            if (!added.succeeded() && !Files.exists(namespace, LinkOption.NOFOLLOW_LINKS)) {
                throw new IOException("cannot make the run's network (ip netns add): " + added.output());
            }
        }
        SystemCommand.Result up = SystemCommand.run(List.of("ip", "-n", name, "link", "set", "lo", "up"), COMMAND_TIMEOUT);
        if (!up.succeeded()) {
            throw new IOException("cannot bring up the run's loopback: " + up.output());
        }
        if (server != null) {
            relay.relayTo(server);
            ensureForwarder(name, namespace);
        }
        return namespace;
    }

    /** Where instances on a private network reach the API: {@code server}'s scheme, on the forwarder. */
    public static String serverInside(String server) {
        String scheme = server.startsWith("https:") ? "https" : "http";
        return scheme + "://127.0.0.1:" + API_PORT;
    }

    private void ensureForwarder(String name, Path namespace) throws IOException {
        Path pidFile = state.resolve(name + ".forwarder");
        byte[] recorded = SafeFiles.readControlFile(pidFile, 64);
        if (recorded != null) {
            String[] fields = new String(recorded, StandardCharsets.US_ASCII).trim().split(" ");
            if (fields.length == 2 && fields[0].matches("[0-9]{1,10}") && fields[1].matches("-?[0-9]{1,19}")
                    && ProcFs.isAlive(Long.parseLong(fields[0]), Long.parseLong(fields[1]))) {
                return;
            }
        }
        // A session of its own: neither a kill -9 of the server nor its terminal's Ctrl-C reaches it.
        ProcessBuilder builder = new ProcessBuilder("setsid", "nsenter", "--net=" + namespace, "--", "socat",
                "TCP-LISTEN:" + API_PORT + ",bind=127.0.0.1,reuseaddr,fork,max-children=" + MAX_CONNECTIONS_PER_RUN + ",su=nobody", "UNIX-CONNECT:" + root.resolve(".api.sock"))
                .redirectInput(Redirects.NO_INPUT)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                .redirectError(Redirects.appendToControlFile(state.resolve(name + ".log")));
        builder.environment().clear();
        builder.environment().put("PATH", "/usr/sbin:/usr/bin:/sbin:/bin");
        Process forwarder = builder.start();
        long started = ProcFs.stat(forwarder.pid()).map(ProcFs.Stat::startTime).orElse(-1L);
        SafeFiles.writeControlFile(pidFile, (forwarder.pid() + " " + started + "\n").getBytes(StandardCharsets.US_ASCII), "rw-------");
        long deadline = System.nanoTime() + FORWARDER_START.toNanos();
        while (!listening(forwarder.pid(), API_PORT)) {
            if (!forwarder.isAlive()) {
                throw new IOException("the run's API forwarder (socat) exited at once: see " + state.resolve(name + ".log"));
            }
            if (System.nanoTime() > deadline) {
                forwarder.destroyForcibly();
                throw new IOException("the run's API forwarder (socat) is not listening after " + FORWARDER_START.toSeconds() + " s");
            }
            java.util.concurrent.locks.LockSupport.parkNanos(5_000_000);
        }
    }

    /** Whether {@code pid}'s network has a socket listening on {@code port} of the loopback address or of every address. */
    public static boolean listening(long pid, int port) {
        String suffix = String.format(":%04X", port);
        java.util.Set<String> addresses = java.util.Set.of("0100007F", "00000000", "00000000000000000000000000000000",
                "00000000000000000000000001000000", "0000000000000000FFFF00000100007F");
        for (String table : List.of("tcp", "tcp6")) {
            for (String line : ProcFs.netTable(pid, table)) {
                String[] fields = line.trim().split("\\s+");
                if (fields.length > 3 && fields[1].endsWith(suffix) && fields[3].equals("0A")
                        && addresses.contains(fields[1].substring(0, fields[1].length() - suffix.length()))) {
                    return true;
                }
            }
        }
        return false;
    }

    /** Kills whatever runs in the run's network and removes it; nothing if it has none. */
    public synchronized void remove(RunId run) {
        String name = nameOf(run);
        Path namespace = NAMESPACES.resolve(name);
        try {
            if (Files.exists(namespace, LinkOption.NOFOLLOW_LINKS)) {
                killMembers(namespace);
                SystemCommand.Result deleted = SystemCommand.run(List.of("ip", "netns", "delete", name), COMMAND_TIMEOUT);
                if (!deleted.succeeded()) {
                    LOG.warn("cannot remove the network of run {}: {}", run, deleted.output());
                }
            }
            Files.deleteIfExists(state.resolve(name + ".forwarder"));
            Files.deleteIfExists(state.resolve(name + ".log"));
        } catch (IOException e) {
            LOG.warn("cannot remove the network of run {}: {}", run, e.toString());
        }
    }

    /** Every process whose network is {@code namespace}'s (the forwarder, anything the run left), killed. */
    private static void killMembers(Path namespace) throws IOException {
        Object inode = Files.getAttribute(namespace, "unix:ino");
        String link = "net:[" + inode + "]";
        for (int round = 0; round < 50; round++) {
            int found = 0;
            try (DirectoryStream<Path> processes = Files.newDirectoryStream(Path.of("/proc"), entry -> entry.getFileName().toString().matches("[0-9]+"))) {
                for (Path process : processes) {
                    try {
                        if (Files.readSymbolicLink(process.resolve("ns").resolve("net")).toString().equals(link)) {
                            found++;
                            ProcessHandle.of(Long.parseLong(process.getFileName().toString())).ifPresent(ProcessHandle::destroyForcibly);
                        }
                    } catch (IOException e) {
                        // gone meanwhile, or a kernel thread
                    }
                }
            }
            if (found == 0) {
                return;
            }
            java.util.concurrent.locks.LockSupport.parkNanos(20_000_000);
        }
    }

    /** Unique per data directory and run, and short enough for a network namespace's name. */
    public String nameOf(RunId run) {
        try {
            byte[] hash = MessageDigest.getInstance("SHA-256").digest((root + "\n" + run).getBytes(StandardCharsets.UTF_8));
            return "slipstream-" + HexFormat.of().formatHex(hash).substring(0, 20);
        } catch (NoSuchAlgorithmException e) {
            throw new ExecutorException("no SHA-256", e);
        }
    }

    public void close() {
        relay.close();
    }
}
