package io.slipstream.executor.slurm;

import io.slipstream.api.codec.Json;
import io.slipstream.api.run.InstanceId;
import io.slipstream.executor.Executor;
import io.slipstream.executor.local.files.InstanceDirectory;
import io.slipstream.executor.local.files.SafeFiles;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import tools.jackson.core.type.TypeReference;

/**
 * Instances' handles and where their directories are. An instance's directory is
 * {@code <sharedDirectory>/instances/<run>/<attempt>/<rank>/}, found from its id alone (a handle from the store is never
 * trusted with a path); a launch that was restarted in place since is in {@code <rank>.restart-<n>} beside it. A handle
 * names the launch's Slurm job ({@value #JOB}), its directory ({@value #DIR}, relative), node, leader epoch and restart
 * ({@link Executor#RESTART_KEY}, when above 0). It is kept in the directory twice: {@code slurm_launch}, everything but
 * the job, written before sbatch, and {@code slurm_handle}, the whole handle, once sbatch said the job's id; a server
 * that crashed between the two finds the job again by its name.
 *
 * <p>The workload can write its directory, and so both files: a job is only ever taken from a handle as a Slurm job id
 * ({@link #isJobId}, digits), never as anything a Slurm command could read as an option ({@code --user=...}).
 */
final class SlurmHandles {
    static final String JOB = "job";
    static final String DIR = "dir";
    static final String NODE = "node";
    static final String EPOCH = "epoch";
    /** The account the job runs as (slurm.users), when not the server's own. */
    static final String UID = "uid";
    static final String GID = "gid";
    private static final Logger LOG = LoggerFactory.getLogger(SlurmHandles.class);
    /** A Slurm job id: digits, never an option or a list. */
    private static final Pattern JOB_ID = Pattern.compile("\\d{1,20}");
    private static final String LAUNCH_FILE = "slurm_launch";
    private static final String HANDLE_FILE = "slurm_handle";
    private static final int MAX_BYTES = 4096;
    private static final TypeReference<Map<String, String>> MAP = new TypeReference<>() { };

    private final Path root;

    SlurmHandles(Path root) {
        this.root = root;
    }

    Path root() {
        return root;
    }

    /** Where the instance's current launch is. */
    InstanceDirectory directoryOf(InstanceId id) {
        return InstanceDirectory.sharedWithWorkload(root.resolve(relative(id)));
    }

    /** Where the instance's current launch is, its files shared with {@code account}'s group ({@code null}: the server's account). */
    InstanceDirectory directoryOf(InstanceId id, SlurmAccounts.Account account) {
        return at(root.resolve(relative(id)), account == null ? null : account.gid());
    }

    private static InstanceDirectory at(Path path, Integer gid) {
        return gid == null ? InstanceDirectory.sharedWithWorkload(path) : InstanceDirectory.sharedWithWorkload(path, gid);
    }

    /** The uid the handle's job runs as, or {@code null} (the server's own). */
    static Integer uidOf(Map<String, String> handle) {
        return id(handle.get(UID));
    }

    /** The group the handle's files are shared with, or {@code null}. */
    static Integer gidOf(Map<String, String> handle) {
        return id(handle.get(GID));
    }

    private static Integer id(String value) {
        return value != null && value.matches("[1-9]\\d{0,8}") ? Integer.valueOf(value) : null;
    }

    private static Path relative(InstanceId id) {
        return Path.of(id.runId().value(), Integer.toString(id.attempt()), Integer.toString(id.rank()));
    }

    /** Where the launch {@code handle} is of: the instance's directory, or, after a restart in place, the one set aside. */
    InstanceDirectory directoryOf(InstanceId id, Map<String, String> handle) {
        InstanceDirectory current = at(root.resolve(relative(id)), gidOf(handle));
        int restart = Executor.restartOf(handle);
        if (!Files.isDirectory(current.path(), LinkOption.NOFOLLOW_LINKS) || current.restart() == restart) {
            return current;
        }
        Path aside = current.path().resolveSibling(current.path().getFileName() + ".restart-" + restart);
        return Files.isDirectory(aside, LinkOption.NOFOLLOW_LINKS) ? at(aside, gidOf(handle)) : current;
    }

    /** The handle of a launch before its job is known. */
    static Map<String, String> launch(InstanceId id, String node, long epoch, int restart, SlurmAccounts.Account account) {
        Map<String, String> handle = new LinkedHashMap<>();
        handle.put(DIR, relative(id).toString());
        handle.put(NODE, node);
        handle.put(EPOCH, Long.toString(epoch));
        if (account != null) {
            handle.put(UID, Integer.toString(account.uid()));
            handle.put(GID, Integer.toString(account.gid()));
        }
        if (restart > 0) {
            handle.put(Executor.RESTART_KEY, Integer.toString(restart));
        }
        return handle;
    }

    /** Whether {@code job} is a Slurm job id (digits alone). */
    static boolean isJobId(String job) {
        return job != null && JOB_ID.matcher(job).matches();
    }

    /**
     * The launch's handle with its job.
     *
     * @throws IllegalArgumentException if {@code job} is not a Slurm job id
     */
    static Map<String, String> withJob(Map<String, String> launch, String job) {
        if (!isJobId(job)) {
            throw new IllegalArgumentException("not a Slurm job id: \"" + printable(job) + "\"");
        }
        Map<String, String> handle = new LinkedHashMap<>(launch);
        handle.put(JOB, job);
        return Map.copyOf(handle);
    }

    void writeLaunch(InstanceDirectory dir, Map<String, String> launch) throws IOException {
        write(dir.path().resolve(LAUNCH_FILE), launch);
    }

    void writeHandle(InstanceDirectory dir, Map<String, String> handle) throws IOException {
        write(dir.path().resolve(HANDLE_FILE), handle);
    }

    /**
     * The handle of the directory's launch once its job was recorded, or empty; a handle whose job is not a Slurm job id
     * (the workload wrote it) is ignored, and said.
     */
    Optional<Map<String, String>> handle(InstanceDirectory dir) throws IOException {
        Optional<Map<String, String>> handle = read(dir.path().resolve(HANDLE_FILE));
        if (handle.isPresent() && !isJobId(handle.get().get(JOB))) {
            LOG.warn("ignoring {}: its job \"{}\" is not a Slurm job id (written by the instance?)", dir.path().resolve(HANDLE_FILE),
                    printable(handle.get().get(JOB)));
            return Optional.empty();
        }
        return handle;
    }

    /** A value read from a file the workload can write, fit for a log line. */
    static String printable(String value) {
        if (value == null) {
            return "";
        }
        String shown = value.length() > 64 ? value.substring(0, 64) + "..." : value;
        return shown.replaceAll("[^\\x20-\\x7e]", "?");
    }

    /** What {@link #writeLaunch} kept: the launch was begun, its job may or may not have been submitted (a job it names is dropped). */
    Optional<Map<String, String>> launchRecord(InstanceDirectory dir) throws IOException {
        return read(dir.path().resolve(LAUNCH_FILE)).map(launch -> {
            Map<String, String> withoutJob = new LinkedHashMap<>(launch);
            withoutJob.remove(JOB);
            return Map.copyOf(withoutJob);
        });
    }

    private static void write(Path file, Map<String, String> handle) throws IOException {
        SafeFiles.writeControlFile(file, Json.mapper().writeValueAsString(handle).getBytes(StandardCharsets.UTF_8), "rw-------");
    }

    private static Optional<Map<String, String>> read(Path file) throws IOException {
        byte[] data = SafeFiles.readSharedFile(file, MAX_BYTES);
        if (data == null) {
            return Optional.empty();
        }
        try {
            return Optional.of(Map.copyOf(Json.mapper().readValue(data, MAP)));
        } catch (RuntimeException e) {
            throw new IOException("unreadable " + file + ": " + e.getMessage(), e);
        }
    }
}
