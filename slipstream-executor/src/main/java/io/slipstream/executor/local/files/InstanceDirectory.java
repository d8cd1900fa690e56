package io.slipstream.executor.local.files;

import io.slipstream.api.run.Hostfile;
import io.slipstream.executor.Activity;
import io.slipstream.executor.ExecutorException;
import io.slipstream.executor.LaunchSpec;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * The files of one instance. The directory itself is the server's <em>control directory</em>: the workload can pass
 * through it (mode 0711) but can create, rename or replace nothing in it, so what the server keeps there cannot be
 * swapped for a link or a FIFO:
 * <ul>
 *   <li>{@code pid} ("supervisor-pid instance-pid") and {@code exit_code}, written by the instance's supervisor, which
 *       runs as the server's user; {@code stdout.log}, {@code stderr.log} (the workload writes them through the
 *       descriptors it inherits, and cannot rename or replace them), {@code supervisor.log} ({@link InstanceLogs});</li>
 *   <li>{@code metadata.json}, {@code hostfile}, {@code hostfile.mpich}, {@code preemption_notice.json} and
 *       {@code secrets/} and {@code identity/} (readable by the workload), {@code env} and {@code sandbox.args} (while it runs),
 *       {@code terminate_requested}, {@code probe.json}, {@code ready}, {@code image}, {@code restart}, the
 *       {@code *_epoch} records and {@code progress_ignored}.</li>
 * </ul>
 * The workload owns three directories below it: {@code work/} (its sandbox, default working directory and home),
 * {@code tmp/}, and {@code report/}, where it writes what the server reads from it: {@code progress.json} and
 * {@code preemption_ack}. Those are read with {@link SafeFiles#readWorkloadFile} or only looked at.
 */
public final class InstanceDirectory {
    static final int MAX_CONTROL_FILE_BYTES = 64;
    private static final int MAX_PROBE_BYTES = 1024 * 1024;
    private static final int MAX_IMAGE_FILE_BYTES = 128;
    private static final java.util.regex.Pattern ENV_NAME = java.util.regex.Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");
    private static final String[] WORKLOAD_DIRECTORIES = {"work", "tmp", "report"};

    private final Path dir;
    /** Whether the workload can write the directory itself (Slurm's, on a shared file system): its files are then read so. */
    private final boolean shared;
    /** The group its workload's account is in, where it is not the number of the uid (Slurm's accounts); else {@code null}. */
    private final Integer gid;

    /** The directory of an instance of the local executor, which only the server can write. */
    public InstanceDirectory(Path dir) {
        this(dir, false, null);
    }

    private InstanceDirectory(Path dir, boolean shared, Integer gid) {
        this.dir = dir;
        this.shared = shared;
        this.gid = gid;
    }

    /**
     * A directory on a file system the workload's jobs reach (the Slurm executor's), given to a uid whose group is
     * {@code gid} rather than the uid's own number; its files are read as {@link #sharedWithWorkload(Path)}'s.
     */
    public static InstanceDirectory sharedWithWorkload(Path dir, int gid) {
        return new InstanceDirectory(dir, true, gid);
    }

    /** The group that may read what the server gives {@code uid}'s instance. */
    private int group(int uid) {
        return gid != null ? gid : uid;
    }

    /**
     * A directory the workload can write too (the Slurm executor's, where the job runs as the account that owns it):
     * its files are read on a thread of their own, a short wait at most ({@link SafeFiles#readSharedFile}).
     */
    public static InstanceDirectory sharedWithWorkload(Path dir) {
        return new InstanceDirectory(dir, true, null);
    }

    /** Reads one of its files as {@link SafeFiles#readControlFile}, or as {@link SafeFiles#readSharedFile} where shared. */
    private byte[] read(Path file, int maxBytes) throws IOException {
        return shared ? SafeFiles.readSharedFile(file, maxBytes) : SafeFiles.readControlFile(file, maxBytes);
    }

    public Path path() {
        return dir;
    }

    public Path tmp() {
        return dir.resolve("tmp");
    }

    public Path supervisorLog() {
        return logs().supervisor();
    }

    public Path sandbox() {
        return dir.resolve("work");
    }

    private Path reportDir() {
        return dir.resolve("report");
    }

    /** The instance's logs ({@code stdout.log}, {@code stderr.log}, {@code supervisor.log}). */
    public InstanceLogs logs() {
        return new InstanceLogs(dir, shared);
    }

    /**
     * Makes the directory and the workload's own directories in it, and the working directory {@code workingDir}
     * (relative to the sandbox, or {@code null} for the sandbox itself), which is returned. Everything is made by the
     * server first and given to {@code uid} last, so no instance (not even another of the same run) can have put a
     * link where a directory is made. With a uid, nobody but that uid may enter the workload's directories.
     *
     * <p>A launch killed ({@code kill -9} of the server) while it made them leaves some of them: the next launch of
     * the instance makes the rest and gives them away again. Nothing of the workload ran yet (its supervisor never
     * started), and until the sandbox itself is given away (last) nobody but the server can enter it. A sandbox that
     * was given away already is taken as it is, only checked: its uid may have changed what lies in it.
     */
    public Path create(Integer uid, String workingDir) throws IOException {
        Path target = sandbox();
        if (workingDir != null) {
            target = sandbox().resolve(workingDir).normalize();
            if (!target.startsWith(sandbox()) || target.equals(dir)) {
                throw new ExecutorException("workingDir " + workingDir + " leaves the instance's directory");
            }
        }
        Files.createDirectories(dir);
        if (uid != null) {
            passableByGroup(dir, group(uid));
        }
        if (uid != null && givenTo(sandbox(), uid)) {
            // Made and given away by a launch that crashed before its supervisor started.
            for (String name : WORKLOAD_DIRECTORIES) {
                if (!Files.isDirectory(dir.resolve(name), LinkOption.NOFOLLOW_LINKS)) {
                    throw new ExecutorException("instance directory " + dir + " is incomplete (" + name + "); remove it to launch again");
                }
            }
            return inSandbox(workingDir, target);
        }
        List<Path> made = new ArrayList<>();
        for (String name : WORKLOAD_DIRECTORIES) {
            Path path = dir.resolve(name);
            if (!Files.isDirectory(path, LinkOption.NOFOLLOW_LINKS)) {
                // In the server's control directory: nothing but the server can have put anything by that name there.
                Files.createDirectory(path, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
            }
            made.add(path);
        }
        List<Path> below = new ArrayList<>();
        for (Path path = target; !path.equals(sandbox()); path = path.getParent()) {
            below.add(0, path);
        }
        for (Path path : below) {
            // Level by level, never through a link: without a uid, a sandbox left over is the workload's (the server's user's).
            if (!Files.exists(path, LinkOption.NOFOLLOW_LINKS)) {
                Files.createDirectory(path);
            } else if (!Files.isDirectory(path, LinkOption.NOFOLLOW_LINKS)) {
                throw new ExecutorException("workingDir " + workingDir + " leads outside the instance's directory");
            }
            made.add(path);
        }
        inSandbox(workingDir, target);
        if (uid != null) {
            // Deepest first: until "work" itself is the uid's, nobody but the server can enter it.
            for (int i = made.size() - 1; i >= 0; i--) {
                SafeFiles.chown(made.get(i), uid, group(uid));
            }
        }
        return target;
    }

    private static boolean givenTo(Path path, int uid) throws IOException {
        return Files.isDirectory(path, LinkOption.NOFOLLOW_LINKS)
                && Integer.valueOf(uid).equals(Files.getAttribute(path, "unix:uid", LinkOption.NOFOLLOW_LINKS));
    }

    /** The working directory, refused unless it is a directory that really lies in the sandbox. */
    private Path inSandbox(String workingDir, Path target) throws IOException {
        if (!Files.isDirectory(target, LinkOption.NOFOLLOW_LINKS) || !target.toRealPath().startsWith(sandbox().toRealPath())) {
            throw new ExecutorException("workingDir " + workingDir + " leads outside the instance's directory");
        }
        return target;
    }

    /**
     * Makes the directories above this one under {@code root} ({@code <run>/<attempt>}), each passable by {@code uid}
     * alone when there is one.
     */
    public void createParents(Path root, Integer uid) throws IOException {
        for (Path path = dir.getParent(); path.startsWith(root) && !path.equals(root); path = path.getParent()) {
            Files.createDirectories(path);
            if (uid != null) {
                passableByGroup(path, group(uid));
            }
        }
    }

    /**
     * A directory of the server's that only the run's uid (its group, of the same number) may pass through: other runs
     * can neither enter it nor read what is in it.
     */
    private static void passableByGroup(Path directory, int gid) throws IOException {
        Files.setPosixFilePermissions(directory, PosixFilePermissions.fromString("rwx--x---"));
        Files.setAttribute(directory, "unix:gid", gid, LinkOption.NOFOLLOW_LINKS);
    }

    /** Writes a file of the server's that the instance (and only its run) may read, atomically. */
    private void writeForInstance(Path file, byte[] data) throws IOException {
        SafeFiles.writeControlFile(file, data, "rw-r-----");
        Object group = Files.getAttribute(dir, "unix:gid", LinkOption.NOFOLLOW_LINKS);
        Files.setAttribute(file, "unix:gid", group, LinkOption.NOFOLLOW_LINKS);
    }

    /** Writes the run's metadata where the instance can read it (and only read it), completely, before it starts. */
    public Path writeMetadata(io.slipstream.api.run.ClusterMetadata metadata) throws IOException {
        Path file = dir.resolve("metadata.json");
        String json = io.slipstream.api.codec.Json.mapper().writerWithDefaultPrettyPrinter().writeValueAsString(metadata) + "\n";
        writeForInstance(file, json.getBytes(StandardCharsets.UTF_8));
        writeForInstance(hostfile(Hostfile.Syntax.OPEN_MPI),
                Hostfile.of(metadata, Hostfile.Syntax.OPEN_MPI).getBytes(StandardCharsets.UTF_8));
        writeForInstance(hostfile(Hostfile.Syntax.MPICH),
                Hostfile.of(metadata, Hostfile.Syntax.MPICH).getBytes(StandardCharsets.UTF_8));
        return file;
    }

    /** The run's MPI hostfile in {@code syntax} ({@code SLIPSTREAM_HOSTFILE}, {@code SLIPSTREAM_MPICH_HOSTFILE}). */
    public Path hostfile(Hostfile.Syntax syntax) {
        return dir.resolve(syntax == Hostfile.Syntax.OPEN_MPI ? "hostfile" : "hostfile.mpich");
    }

    /**
     * The file the instance's environment travels in ({@code env}): the processes that start the instance run as the
     * server's user with a fixed environment of their own (a job's {@code LD_PRELOAD} or {@code PATH} must never reach
     * a process of the server's), and the workload's is applied by the first process that runs as the instance's uid.
     */
    public Path environmentFile() {
        return dir.resolve("env");
    }

    /**
     * Writes the environment as {@code export NAME='value'} lines, read by the instance's own shell (as the instance's
     * uid: nothing in it reaches the server), readable by the instance's run only.
     */
    public void writeEnvironment(java.util.Map<String, String> env) throws IOException {
        StringBuilder text = new StringBuilder();
        for (var entry : env.entrySet()) {
            if (!ENV_NAME.matcher(entry.getKey()).matches()) {
                throw new ExecutorException("'" + entry.getKey() + "' is not an environment variable name");
            }
            if (entry.getValue().indexOf('\0') >= 0) {
                // The API refuses NUL in every string; no environment can hold one (the launcher refuses such a file).
                throw new ExecutorException("environment variable " + entry.getKey() + " holds a NUL character");
            }
            text.append("export ").append(entry.getKey()).append("='").append(entry.getValue().replace("'", "'\\''")).append("'\n");
        }
        writeForInstance(environmentFile(), text.toString().getBytes(StandardCharsets.UTF_8));
    }

    /**
     * Writes the instance's Secrets under {@code secrets/} (see {@link SecretFiles}), replacing what an interrupted
     * start left there, and returns that directory.
     *
     * @param uid the run's uid, whose group may read them, or {@code null}
     */
    public Path writeSecrets(java.util.List<LaunchSpec.SecretFiles> secrets, Integer uid) throws IOException {
        return SecretFiles.write(dir, secrets, uid == null ? null : group(uid));
    }

    /** Where the instance's identity tokens are ({@link #writeIdentity}). */
    public Path identityDir() {
        return dir.resolve(IdentityFiles.DIR);
    }

    /** Writes the instance's identity tokens ({@code identity/}) and returns their directory. */
    public Path writeIdentity(java.util.List<io.slipstream.executor.IdentityToken> tokens, Integer uid) throws IOException {
        return IdentityFiles.write(dir, tokens, uid == null ? null : group(uid));
    }

    /** Replaces the running instance's identity tokens; {@code false} if they are gone (it ended). */
    public boolean refreshIdentity(java.util.List<io.slipstream.executor.IdentityToken> tokens, Integer uid) throws IOException {
        return IdentityFiles.refresh(dir, tokens, uid == null ? null : group(uid));
    }

    /**
     * The secrets, the identity tokens and the environment (which may hold secrets) stay on disk while the instance
     * runs, no longer.
     */
    public void removeSecrets() throws IOException {
        SecretFiles.remove(dir);
        IdentityFiles.remove(dir);
        Files.deleteIfExists(environmentFile());
        Files.deleteIfExists(sandboxArguments());
    }

    /** An instance with an image: bubblewrap's arguments, its environment among them, for the server only (image.Sandbox). */
    private Path sandboxArguments() {
        return dir.resolve("sandbox.args");
    }

    /** Writes bubblewrap's arguments where only the server can read them; returns their file. */
    public Path writeSandboxArguments(byte[] arguments) throws IOException {
        Path file = sandboxArguments();
        SafeFiles.writeControlFile(file, arguments, "rw-------");
        return file;
    }

    /** An instance with an image: the digest of its image, while it may run (the image cache keeps what one names). */
    private Path imageFile() {
        return dir.resolve("image");
    }

    public void recordImage(String digest) throws IOException {
        SafeFiles.writeControlFile(imageFile(), (digest + "\n").getBytes(StandardCharsets.US_ASCII), "rw-------");
    }

    /** The digest {@link #recordImage} recorded, or {@code null}. */
    public String image() throws IOException {
        byte[] digest = read(imageFile(), MAX_IMAGE_FILE_BYTES);
        return digest == null ? null : new String(digest, StandardCharsets.US_ASCII).trim();
    }

    /** Keeps what the instance's startup probe needs to run again after a restart of the server (never a secret). */
    public void writeProbe(byte[] json) throws IOException {
        SafeFiles.writeControlFile(dir.resolve("probe.json"), json, "rw-------");
    }

    /** What {@link #writeProbe} kept, or {@code null}. */
    public byte[] probe() throws IOException {
        return read(dir.resolve("probe.json"), MAX_PROBE_BYTES);
    }

    /** Remembers that the startup probe succeeded, and when. */
    public void markReady(Instant at) throws IOException {
        SafeFiles.writeControlFile(dir.resolve("ready"), at.toString().getBytes(StandardCharsets.UTF_8), "rw-r--r--");
    }

    public boolean ready() {
        return SafeFiles.exists(dir.resolve("ready"));
    }

    /** Where the instance finds the notice that it is being stopped ({@code SLIPSTREAM_PREEMPTION_NOTICE_FILE}). */
    public Path noticeFile() {
        return dir.resolve("preemption_notice.json");
    }

    /** Writes the notice atomically: an instance never reads half of it. */
    public void writeNotice(String reason, Instant deadline) {
        try {
            var notice = io.slipstream.api.codec.Json.mapper().createObjectNode();
            notice.put("reason", reason);
            notice.put("deadline", deadline.toString());
            writeForInstance(noticeFile(), (notice + "\n").getBytes(StandardCharsets.UTF_8));
        } catch (IOException e) {
            // Best effort: the signal still comes.
        }
    }

    /** Where the instance writes to say it saved its work and may be stopped now ({@code SLIPSTREAM_PREEMPTION_ACK_FILE}). */
    public Path ackFile() {
        return reportDir().resolve("preemption_ack");
    }

    /** Whether the instance acknowledged its notice: anything by that name counts, and nothing of it is opened. */
    public boolean acknowledged() {
        return SafeFiles.exists(ackFile());
    }

    /** Where the instance reports its progress ({@code SLIPSTREAM_PROGRESS_FILE}). */
    public Path progressFile() {
        return reportDir().resolve("progress.json");
    }

    /**
     * The progress the instance last reported, or {@code null} (see {@link ProgressFile}). A progress file the workload
     * held a lease on ({@link PinnedFile.Stalled}) is not read again for this instance ({@code progress_ignored}): each
     * read would keep the caller, the control loop, waiting again; the instance may still report through the API.
     *
     * @param pins  a pin directory of the server's on this file system
     * @param owner the run's uid, whose file it must be, or {@code null}
     */
    public Activity.Progress progress(Path pins, Integer owner) {
        Path ignored = dir.resolve("progress_ignored");
        if (SafeFiles.exists(ignored)) {
            return null;
        }
        try {
            return ProgressFile.read(progressFile(), pins, owner);
        } catch (PinnedFile.Stalled e) {
            try {
                SafeFiles.touchControlFile(ignored);
            } catch (IOException notRecorded) {
                // looked at again next time, and found leased again
            }
            return null;
        }
    }

    /** Records the leader epoch an action was taken at ({@code launch}, {@code stop}): who did what, after a takeover. */
    public void recordEpoch(String action, long epoch) {
        try {
            SafeFiles.writeControlFile(dir.resolve(action + "_epoch"), (epoch + "\n").getBytes(StandardCharsets.US_ASCII), "rw-------");
        } catch (IOException e) {
            // Best effort: the fence, not this record, is what keeps an old leader from acting.
        }
    }

    /** The epoch {@link #recordEpoch} recorded for {@code action}, or {@code null}. */
    public Long epochOf(String action) {
        Integer value = SafeFiles.readControlNumber(dir.resolve(action + "_epoch"));
        return value == null ? null : value.longValue();
    }

    /** Which restart in place of its rank this directory's launch is ({@link io.slipstream.executor.LaunchSpec#restart}). */
    public void recordRestart(int restart) throws IOException {
        SafeFiles.writeControlFile(dir.resolve("restart"), (restart + "\n").getBytes(StandardCharsets.US_ASCII), "rw-------");
    }

    /** What {@link #recordRestart} recorded; 0 when nothing was (a first launch). */
    public int restart() {
        Integer value = SafeFiles.readControlNumber(dir.resolve("restart"));
        return value == null ? 0 : value;
    }

    /**
     * Moves the directory of an ended launch aside ({@code <rank>.restart-<n>}, next to it, kept with its logs until the
     * run is forgotten), so that the rank's next launch starts in an empty one: its pid and exit files can then only be
     * the new process's. Returns where it went.
     */
    public Path setAside(int restart) throws IOException {
        Path target = dir.resolveSibling(dir.getFileName() + ".restart-" + restart);
        for (int n = 1; Files.exists(target, LinkOption.NOFOLLOW_LINKS); n++) {
            target = dir.resolveSibling(dir.getFileName() + ".restart-" + restart + "." + n); // set aside before, then a crash
        }
        Files.move(dir, target, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
        return target;
    }

    /** Remembers (across a restart of the server) that the platform asked the instance to stop. */
    public void markTerminationRequested() {
        try {
            SafeFiles.touchControlFile(dir.resolve("terminate_requested"));
        } catch (IOException e) {
            // Best effort: without it a stop looks like a failure after a restart.
        }
    }

    public boolean terminationRequested() {
        return SafeFiles.exists(dir.resolve("terminate_requested"));
    }

    /**
     * What the supervisor's pid file says: its own pid and the instance's leader (the process it started), and whether
     * that leader is the init of the instance's PID namespace itself (the launcher binary, "init") or the process
     * that made the namespace and waits for its init (the shell chain's {@code unshare}).
     */
    public record Pids(long supervisor, long leader, boolean leaderIsInit) {
    }

    /** The pid file once the supervisor started the command, else {@code null}. */
    public Pids pids() throws IOException {
        Path file = dir.resolve("pid");
        byte[] data = read(file, MAX_CONTROL_FILE_BYTES);
        if (data == null) {
            return null;
        }
        String line = new String(data, StandardCharsets.US_ASCII);
        if (!line.endsWith("\n")) {
            return null; // being written
        }
        String[] fields = line.trim().split(" ");
        try {
            if (fields.length != 2 && !(fields.length == 3 && fields[2].equals("init"))) {
                throw new IOException("unreadable " + file);
            }
            return new Pids(Long.parseLong(fields[0]), Long.parseLong(fields[1]), fields.length == 3);
        } catch (NumberFormatException e) {
            throw new IOException("unreadable " + file + ": " + e.getMessage());
        }
    }

    /** The exit code the supervisor recorded, or {@code null} if it has not (yet) or it cannot be read. */
    public Integer exitCode() {
        try {
            byte[] data = read(dir.resolve("exit_code"), MAX_CONTROL_FILE_BYTES);
            String line = data == null ? "" : new String(data, StandardCharsets.US_ASCII);
            return line.endsWith("\n") ? Integer.valueOf(line.trim()) : null; // no newline yet: being written
        } catch (IOException | NumberFormatException e) {
            return null;
        }
    }

    /** The end of what the supervisor itself printed (normally nothing), for error messages. */
    public String supervisorOutput() {
        return logs().supervisorOutput();
    }
}
