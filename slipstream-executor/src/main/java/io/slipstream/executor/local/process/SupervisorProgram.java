package io.slipstream.executor.local.process;

import io.slipstream.executor.local.files.SystemCommand;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The program an instance's supervisor runs ({@link Supervisor}; {@code instances.launcher}): the launcher binary this
 * executor was built with for the machine's architecture ({@code src/main/c/slipstream-launch.c}, compiled where the
 * build has a C compiler), or the shell chain ({@link Supervisor#SCRIPT}). Both take the same arguments, write the same
 * files and exit the same way; the binary starts an instance with one exec (the workload's) instead of eight, for a
 * quarter of the CPU. With the binary, the supervisors are forked by its long-lived copy, the {@link LaunchHelper}.
 *
 * <p>The binary is copied out of the jar into the data directory ({@code instances/.launcher}, the server's alone), under
 * a name of its contents, and tried once at every start, so that a data directory on a {@code noexec} file system falls
 * back to the shell.
 */
public final class SupervisorProgram {
    private static final Logger LOG = LoggerFactory.getLogger(SupervisorProgram.class);
    /** Where the build puts the binary in the jar, by the JVM's name for the architecture (amd64, aarch64). */
    static final String RESOURCE = "launcher/linux-" + System.getProperty("os.arch") + "/slipstream-launch";
    private static final Duration TRIAL_TIMEOUT = Duration.ofSeconds(10);
    /** The launcher's answer without arguments: its usage and exit code 2. */
    private static final int USAGE_EXIT_CODE = 2;

    /** {@code instances.launcher} (docs/configuration.md). */
    public enum Mode {
        /** The binary when this build has one for this machine and it runs from the data directory; the shell otherwise. */
        auto,
        /** The binary, or the server does not start. */
        binary,
        /** The shell chain, always. */
        shell
    }

    private final Path binary;

    private SupervisorProgram(Path binary) {
        this.binary = binary;
    }

    static SupervisorProgram shell() {
        return new SupervisorProgram(null);
    }

    /** Whether this build carries the launcher binary for this machine's architecture. */
    public static boolean binaryInBuild() {
        return SupervisorProgram.class.getResource(RESOURCE) != null;
    }

    /** The program {@code mode} asks for, its binary copied into {@code root} (the instances' root). */
    public static SupervisorProgram of(Mode mode, Path root) {
        if (mode == Mode.shell) {
            return shell();
        }
        String obstacle = "this build has no launcher binary for " + System.getProperty("os.arch")
                + " (it is compiled where the build has a C compiler)";
        boolean built = false;
        try (InputStream binaryInJar = SupervisorProgram.class.getResourceAsStream(RESOURCE)) {
            if (binaryInJar != null) {
                built = true;
                Path binary = install(binaryInJar, root.resolve(".launcher"));
                obstacle = trial(binary);
                if (obstacle == null) {
                    LOG.info("instances start through the launcher binary {}", binary);
                    return new SupervisorProgram(binary);
                }
            }
        } catch (IOException e) {
            obstacle = "cannot install the launcher binary: " + e.getMessage();
        }
        if (mode == Mode.binary) {
            throw new IllegalStateException("instances.launcher is binary, but " + obstacle);
        }
        if (built) {
            LOG.warn("instances start through the shell, at about four times the CPU per start: {}", obstacle);
        } else {
            LOG.info("instances start through the shell: {}", obstacle);
        }
        return shell();
    }

    /** Whether instances start through the binary. */
    boolean isBinary() {
        return binary != null;
    }

    /** The binary; {@code null} with the shell. */
    Path binary() {
        return binary;
    }

    /**
     * The launch helper that forks this program's supervisors, not started yet (at the first launch); {@code null} for
     * the shell chain, whose supervisors are the server's children.
     *
     * @param workingDir the helper's (the instances' root: the server's alone)
     */
    public LaunchHelper launchHelper(Path workingDir) {
        return binary == null ? null : new LaunchHelper(binary, workingDir, Supervisor.PID_FILE_TIMEOUT);
    }

    /** The supervisor's command line up to its arguments (control directory, working directory, ...). */
    List<String> command() {
        return binary == null ? List.of("setsid", "sh", "-c", Supervisor.SCRIPT, "slipstream-supervisor") : List.of(binary.toString());
    }

    /**
     * The binary under a name of its contents ({@code slipstream-launch-<sha-256>}), so that servers of different builds
     * sharing a data directory (replicas) each run their own; written once, by rename, and checked when found.
     */
    private static Path install(InputStream built, Path dir) throws IOException {
        byte[] bytes = built.readAllBytes();
        String digest = sha256(bytes);
        Files.createDirectories(dir);
        if (Files.isSymbolicLink(dir) || !Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)) {
            throw new IOException(dir + " is not a directory");
        }
        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwx------"));
        removeAbandonedCopies(dir);
        Path binary = dir.resolve("slipstream-launch-" + digest.substring(0, 32));
        if (Files.isRegularFile(binary, LinkOption.NOFOLLOW_LINKS) && sha256(Files.readAllBytes(binary)).equals(digest)) {
            Files.setPosixFilePermissions(binary, PosixFilePermissions.fromString("rwx------"));
            return binary;
        }
        Path copy = Files.createTempFile(dir, "slipstream-launch", ".new", PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        try {
            Files.write(copy, bytes);
            Files.setPosixFilePermissions(copy, PosixFilePermissions.fromString("rwx------"));
            Files.move(copy, binary, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            return binary;
        } finally {
            Files.deleteIfExists(copy);
        }
    }

    /** Copies a start that crashed left (an hour old: another server may be writing its own now). */
    private static void removeAbandonedCopies(Path dir) throws IOException {
        java.time.Instant before = java.time.Instant.now().minus(Duration.ofHours(1));
        try (java.nio.file.DirectoryStream<Path> copies = Files.newDirectoryStream(dir, "slipstream-launch*.new")) {
            for (Path copy : copies) {
                if (Files.getLastModifiedTime(copy, LinkOption.NOFOLLOW_LINKS).toInstant().isBefore(before)) {
                    Files.deleteIfExists(copy);
                }
            }
        }
    }

    private static String sha256(byte[] bytes) {
        try {
            return java.util.HexFormat.of().formatHex(java.security.MessageDigest.getInstance("SHA-256").digest(bytes));
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Runs the binary without arguments: it must answer with its usage; {@code null} if it does. */
    private static String trial(Path binary) {
        try {
            SystemCommand.Result result = SystemCommand.run(List.of(binary.toString()), TRIAL_TIMEOUT);
            if (result.exitCode() == USAGE_EXIT_CODE && result.output().contains("usage:")) {
                return null;
            }
            return "the launcher binary " + binary + " does not run here (exit code " + result.exitCode() + "): " + result.output().strip();
        } catch (IOException e) {
            return "the launcher binary " + binary + " does not run here: " + e.getMessage();
        }
    }
}
