package io.slipstream.executor.local;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The command line that starts an instance: a small fixed shell script (never built from input: the command
 * travels as its arguments) in a session of its own. It runs as the server's user with a fixed environment of its own
 * ({@link #ENVIRONMENT}), so the workload can neither signal it, nor touch what it writes in the instance's control
 * directory, nor reach it through its environment: it starts the command in a session of the command's own (as the
 * run's uid when there is one; the workload's environment and working directory are taken on only after the switch,
 * see {@link #ENTER}), writes the pids, waits, and records the exit code. The pid and exit code are written by the shell's own printf, one short
 * write each (readers take a line only once its newline is there).
 */
final class Supervisor {
    /**
     * What the instance's first process does, as the instance's uid: takes on the workload's environment from its file
     * ($0), enters the working directory ($1), and becomes the command. Never run by the server's user with the
     * workload's environment.
     */
    static final String ENTER = "unset ENTER; . \"$0\" && cd -- \"$1\" && shift && exec \"$@\"";

    /** The only environment of the processes that start an instance: nothing of the job's. */
    static final java.util.Map<String, String> ENVIRONMENT = java.util.Map.of("PATH", "/usr/sbin:/usr/bin:/sbin:/bin", "ENTER", ENTER);

    /** $1 control directory, $2 working directory, $3 uid ("" for none), $4 group option; the rest is the command. */
    static final String SCRIPT = String.join("\n",
            "dir=$1; wd=$2; uid=$3; groups=$4; shift 4",
            "umask 077",
            "if [ -n \"$uid\" ]; then",
            "  (umask 002; exec setsid setpriv --reuid=\"$uid\" --regid=\"$uid\" \"$groups\" --no-new-privs -- sh -c \"$ENTER\" \"$dir/env\" \"$wd\" \"$@\")"
                    + " </dev/null >>\"$dir/stdout.log\" 2>>\"$dir/stderr.log\" &",
            "else",
            "  (umask 002; exec setsid -- sh -c \"$ENTER\" \"$dir/env\" \"$wd\" \"$@\") </dev/null >>\"$dir/stdout.log\" 2>>\"$dir/stderr.log\" &",
            "fi",
            "child=$!",
            "printf '%s %s\\n' \"$$\" \"$child\" >\"$dir/pid\"",
            "wait \"$child\"",
            "code=$?",
            "printf '%s\\n' \"$code\" >\"$dir/exit_code\"",
            "");

    private static final Duration PID_FILE_TIMEOUT = Duration.ofSeconds(10);

    private Supervisor() {
    }

    /** The supervisor writes the pid of the instance's main process within milliseconds of starting. */
    static void awaitStarted(InstanceDirectory dir, Process supervisor) throws IOException {
        long deadline = System.nanoTime() + PID_FILE_TIMEOUT.toNanos();
        long pause = 1;
        while (dir.pids() == null) {
            if (!supervisor.isAlive() && dir.pids() == null) {
                throw new IOException("the supervisor exited before starting the command: " + dir.supervisorOutput());
            }
            if (System.nanoTime() > deadline) {
                new ProcessTree(supervisor.pid(), -1).killUntilGone(); // the supervisor, and whatever it started already
                supervisor.destroyForcibly();
                throw new IOException("the supervisor did not start the command within " + PID_FILE_TIMEOUT.toSeconds() + "s");
            }
            try {
                Thread.sleep(pause);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException("interrupted while starting the instance", e);
            }
            pause = Math.min(pause * 2, 20);
        }
    }

    /**
     * @param uid the run's uid, or {@code null} to run as the server's user
     * @param gid the group of the workspace's storage the instance joins, or {@code null} for none
     */
    static List<String> argv(Path controlDir, Path workingDir, Integer uid, Integer gid, List<String> command) {
        List<String> argv = new ArrayList<>(List.of("setsid", "sh", "-c", SCRIPT, "slipstream-supervisor", controlDir.toString(),
                workingDir.toString(), uid == null ? "" : uid.toString(), gid == null ? "--clear-groups" : "--groups=" + gid));
        argv.addAll(command);
        return argv;
    }
}
