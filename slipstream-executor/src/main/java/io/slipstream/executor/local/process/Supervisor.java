package io.slipstream.executor.local.process;

import io.slipstream.executor.local.files.InstanceDirectory;
import io.slipstream.executor.local.files.Redirects;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The command line that starts an instance: a small fixed shell script (never built from input: the command travels as
 * its arguments) in a session of its own, or the launcher binary that takes the same steps in one process image
 * ({@link SupervisorProgram}, {@code src/main/c/slipstream-launch.c}). It runs as the server's user with a fixed environment of its own
 * ({@link #ENVIRONMENT}), so the workload can neither signal it, nor touch what it writes in the instance's control
 * directory, nor reach it through its environment. It starts the command, writes the pids, waits, and records the exit
 * code (each written by the shell's own printf, one short write: readers take a line only once its newline is there).
 *
 * <p>With a uid for the run, the command runs in a PID namespace of its own ({@code unshare --pid}), under a small
 * init ({@link #INIT}) that runs as the run's uid: everything the instance starts stays in that namespace, whatever it
 * does (double forks, {@code setsid}, changing pids), and when the init ends, or is killed, the kernel kills all of it
 * at once. The instance's environment and working directory are taken on only after the switch to the uid; its
 * process count is capped ({@code ulimit -p}, per uid, so per run). Without a uid (a server that is not root) the
 * command starts in a session of its own ({@link #ENTER}). An instance with an image runs in bubblewrap instead
 * ({@code image.Sandbox}): its PID namespace is bubblewrap's, with bubblewrap's own init at its top.
 */
public final class Supervisor {
    /**
     * Without a uid: takes on the workload's environment from its file ($0), enters the working directory ($1), and
     * becomes the command.
     */
    static final String ENTER = "unset ENTER INIT COVER; . \"$0\" && cd -- \"$1\" && shift && exec \"$@\"";

    /**
     * With a uid, as that uid, the first process of the instance's PID namespace: takes on its environment ($0) and
     * working directory ($1), starts the command, waits for it, and exits with its exit code; the namespace goes with
     * it. An init gets no signal it has no handler for, and this one has none: nothing in the namespace can stop or
     * kill it, and the server signals the processes below it (see {@link PidNamespace}). Its own messages go nowhere;
     * the command keeps the instance's stderr.
     */
    static final String INIT = String.join("\n",
            "unset ENTER INIT COVER; . \"$0\" && cd -- \"$1\" || exit 2",
            "shift",
            "exec 3>&2 2>/dev/null",
            "\"$@\" 2>&3 3>&- &",
            "exec 3>&-",
            "wait \"$!\"",
            "exit \"$?\"");

    /**
     * As root, the first step of a process of the instance's that the supervisor does not start (a startup probe): takes
     * the instance's OOM score ($1, "" to keep the server's) and joins its cgroup ($2, the {@code cgroup.procs} files
     * separated by colons, "" for none), as {@link #SCRIPT}'s {@code enter} does, then becomes the rest; nothing runs if
     * either fails.
     */
    public static final String JOIN = "oom=$1; cgroups=$2; shift 2; if [ -n \"$oom\" ]; then printf '%s\\n' \"$oom\" >/proc/self/oom_score_adj || exit 2; fi;"
            + " set -f; IFS=:; for procs in $cgroups; do printf '0\\n' >\"$procs\" || exit 2; done; unset IFS; set +f; exec \"$@\"";

    /** The only environment of the processes that start an instance: nothing of the job's. */
    static final java.util.Map<String, String> ENVIRONMENT = java.util.Map.of("PATH", "/usr/sbin:/usr/bin:/sbin:/bin", "ENTER", ENTER,
            "INIT", INIT, "COVER", DeviceCover.COVER);

    /**
     * $1 control directory, $2 working directory, $3 uid ("" for none), $4 group option, $5 most processes of the uid,
     * $6 the run's network namespace ("" for the machine's), $7 bubblewrap's arguments for an image ("" for none), $8 the
     * instance's {@code oom_score_adj} ("" to keep the server's), $9 the {@code cgroup.procs} files of its cgroup,
     * separated by colons ("" for none), ${10} the GPUs to cover in a mount namespace of the instance's own
     * ({@link DeviceCover#argument()}, "" for none: only with a uid and without an image); the rest is the command. The instance's first process sets its OOM score and
     * joins its cgroup itself, as root, before anything else, so nothing of it runs outside or can undo either (a
     * score set by root is the least its uid may set). The network is entered next, as the server (only root may),
     * before anything runs as the uid; bubblewrap reads its arguments from a descriptor the supervisor opened
     * ({@code image.Sandbox}).
     */
    static final String SCRIPT = String.join("\n",
            "dir=$1; wd=$2; uid=$3; groups=$4; nproc=$5; netns=$6; sandbox=$7; oom=$8; cgroups=$9; fence=${10}; shift 10",
            "umask 077",
            // The instance's first process inherits a FIFO's write end (made in the control directory: the server's alone)
            // and closes it once it is in its cgroup, or ends having failed to join it: the supervisor says "started" only
            // then (as the binary does). Opened read-write first, so that no open waits for the other side.
            "joined=\"$dir/joined\"",
            "{ [ -p \"$joined\" ] || mkfifo -- \"$joined\"; } && exec 4<>\"$joined\" || exit 2",
            // In the instance's first process (a subshell: /proc/self and "0" are itself), before it does anything else.
            "enter() { if [ -n \"$oom\" ]; then printf '%s\\n' \"$oom\" >/proc/self/oom_score_adj || exit 2; fi; set -f; IFS=:;"
                    + " for procs in $cgroups; do printf '0\\n' >\"$procs\" || exit 2; done; unset IFS; set +f; exec 4>&-; }",
            "net() { if [ -n \"$netns\" ]; then exec nsenter --net=\"$netns\" -- \"$@\"; fi; exec \"$@\"; }",
            "if [ -n \"$sandbox\" ] && [ -n \"$uid\" ]; then",
            "  (enter; umask 002; ulimit -p \"$nproc\"; net setsid setpriv --reuid=\"$uid\" --regid=\"$uid\" \"$groups\" --no-new-privs --"
                    + " bwrap --args 3 -- \"$@\" 3<\"$sandbox\") </dev/null >>\"$dir/stdout.log\" 2>>\"$dir/stderr.log\" &",
            "elif [ -n \"$sandbox\" ]; then",
            "  (enter; umask 002; net setsid bwrap --args 3 -- \"$@\" 3<\"$sandbox\") </dev/null >>\"$dir/stdout.log\" 2>>\"$dir/stderr.log\" &",
            "elif [ -n \"$uid\" ] && [ -n \"$fence\" ]; then",
            "  (enter; umask 002; ulimit -p \"$nproc\"; net setsid unshare --pid --fork --kill-child --mount-proc -- sh -c \"$COVER\" \"$fence\""
                    + " setpriv --reuid=\"$uid\" --regid=\"$uid\" \"$groups\" --no-new-privs --pdeathsig KILL -- sh -c \"$INIT\" \"$dir/env\" \"$wd\" \"$@\")"
                    + " </dev/null >>\"$dir/stdout.log\" 2>>\"$dir/stderr.log\" &",
            "elif [ -n \"$uid\" ]; then",
            "  (enter; umask 002; ulimit -p \"$nproc\"; net setsid unshare --pid --fork --kill-child -- setpriv --reuid=\"$uid\" --regid=\"$uid\" \"$groups\""
                    + " --no-new-privs --pdeathsig KILL -- sh -c \"$INIT\" \"$dir/env\" \"$wd\" \"$@\") </dev/null >>\"$dir/stdout.log\" 2>>\"$dir/stderr.log\" &",
            "else",
            "  (enter; umask 002; net setsid -- sh -c \"$ENTER\" \"$dir/env\" \"$wd\" \"$@\") </dev/null >>\"$dir/stdout.log\" 2>>\"$dir/stderr.log\" &",
            "fi",
            "child=$!",
            "exec 5<\"$joined\" 4>&-",
            "rm -f -- \"$joined\"",
            "read -r ignored <&5", // the end of the FIFO: the first process closed its end, joined, or ended
            "exec 5<&-",
            "printf '%s %s\\n' \"$$\" \"$child\" >\"$dir/pid\"",
            // The server waits on this pipe (its stdout) for the pid file: it hears of it at once, without polling. A server
            // that died meanwhile must not take the supervisor with it (SIGPIPE): ignored for this write only, and only
            // here, after the instance was started (an ignored signal would be inherited).
            "trap '' PIPE",
            "printf 'started\\n'",
            "exec >&2",
            "trap - PIPE",
            "wait \"$child\"",
            "code=$?",
            // Relative: the supervisor's working directory is the control directory, and follows it when the data
            // directory is moved (renamed) while the instance runs.
            "printf '%s\\n' \"$code\" >exit_code",
            "");

    /** How long a supervisor may take to start the command and say so. */
    static final Duration PID_FILE_TIMEOUT = Duration.ofSeconds(10);

    private Supervisor() {
    }

    /**
     * Starts the supervisor of {@code argv} ({@link #argv}) for the instance in {@code dir}, through the launch helper
     * when there is one (the binary) or as a child of this process (the shell chain), and waits until it said that it
     * started the command.
     *
     * @return completes when the supervisor ended (exceptionally if the helper ended first: follow it by pid then)
     * @throws IOException it ended without starting the command, or did not start it in time; nothing of it runs on
     */
    public static java.util.concurrent.CompletableFuture<Void> start(LaunchHelper helper, List<String> argv, InstanceDirectory dir) throws IOException {
        if (helper != null) {
            try {
                return helper.start(dir.path(), dir.supervisorLog(), argv.subList(1, argv.size())).ended();
            } catch (IOException e) {
                InstanceDirectory.Pids started = dir.pids();
                if (started != null) {
                    // It got as far as starting the command (the helper died meanwhile): nothing of it may run on.
                    new ProcessTree(started.supervisor(), -1, -1).killUntilGone();
                }
                throw new IOException(e.getMessage() + ": " + dir.supervisorOutput(), e);
            }
        }
        // The server's directory: it never enters the workload's.
        ProcessBuilder builder = Redirects.startInControlDirectory(new ProcessBuilder(argv), dir.path())
                .redirectInput(Redirects.NO_INPUT)
                .redirectOutput(ProcessBuilder.Redirect.PIPE) // see awaitStarted
                .redirectError(Redirects.appendToControlFile(dir.supervisorLog()));
        builder.environment().clear();
        builder.environment().putAll(ENVIRONMENT);
        Process supervisor = builder.start();
        awaitStarted(supervisor);
        return supervisor.onExit().thenApply(ended -> null);
    }

    /**
     * The supervisor writes the pid of the instance's main process within milliseconds of starting, then says so on its
     * stdout (a pipe to this process) and closes it: the read wakes up then, or when the supervisor exits without it.
     */
    private static void awaitStarted(Process supervisor) throws IOException {
        java.util.concurrent.atomic.AtomicBoolean late = new java.util.concurrent.atomic.AtomicBoolean();
        java.util.concurrent.CompletableFuture<Void> started = new java.util.concurrent.CompletableFuture<>();
        // Ends the read if nothing comes: the supervisor, and whatever it started already (its descendants), are killed.
        // On a thread of its own, started only then: the JDK's one delay thread must not wait for processes stuck in the
        // kernel, and a launch in time (every one but a few) starts no thread.
        started.completeOnTimeout(null, PID_FILE_TIMEOUT.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS).thenRun(() -> {
            if (late.compareAndSet(false, true)) {
                Thread killer = new Thread(() -> {
                    new ProcessTree(supervisor.pid(), -1, -1).killUntilGone();
                    supervisor.destroyForcibly();
                }, "slipstream-launch-timeout");
                killer.setDaemon(true);
                killer.start();
            }
        });
        try (java.io.InputStream said = supervisor.getInputStream()) {
            said.readAllBytes(); // "started", then the end of the stream (or only the end, if it exited or was killed)
        } finally {
            boolean inTime = late.compareAndSet(false, true);
            started.complete(null);
            if (!inTime) {
                throw new IOException("the supervisor did not start the command within " + PID_FILE_TIMEOUT.toSeconds() + "s");
            }
        }
    }

    /**
     * @param program      the supervisor program: the launcher binary, or this class's script
     * @param uid          the run's uid, or {@code null} to run as the server's user
     * @param gid          the group of the workspace's storage the instance joins, or {@code null} for none
     * @param maxProcesses how many processes (threads count) the run's uid may have, with a uid
     * @param network      the run's network namespace, or {@code null} for the machine's
     * @param sandbox      bubblewrap's options (an instance with an image), or {@code null}
     * @param oomScoreAdj  the instance's {@code oom_score_adj}, or {@code null} to keep the server's
     * @param cgroupProcs  the {@code cgroup.procs} files of the instance's cgroup; none without one
     */
    public static List<String> argv(SupervisorProgram program, Path controlDir, Path workingDir, Integer uid, Integer gid, int maxProcesses, Path network,
                             Path sandbox, Integer oomScoreAdj, List<Path> cgroupProcs, DeviceCover cover, List<String> command) {
        if (!cover.isEmpty() && (uid == null || sandbox != null)) {
            throw new IllegalArgumentException("GPUs are covered in a mount namespace only for an instance with a uid and without an image");
        }
        for (Path procs : cgroupProcs) {
            if (procs.toString().contains(":")) {
                throw new IllegalArgumentException("a cgroup file's path holds a colon: " + procs);
            }
        }
        List<String> argv = new ArrayList<>(program.command());
        argv.addAll(List.of(controlDir.toString(), workingDir.toString(), uid == null ? "" : uid.toString(),
                gid == null ? "--clear-groups" : "--groups=" + gid, Integer.toString(maxProcesses), network == null ? "" : network.toString(),
                sandbox == null ? "" : sandbox.toString(), oomScoreAdj == null ? "" : oomScoreAdj.toString(),
                String.join(":", cgroupProcs.stream().map(Path::toString).toList()), cover.argument()));
        argv.addAll(command);
        return argv;
    }
}
