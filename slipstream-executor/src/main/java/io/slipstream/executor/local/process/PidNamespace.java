package io.slipstream.executor.local.process;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * The processes of an instance that runs in a PID namespace of its own (see {@link Supervisor#INIT}): everything in
 * the namespace, whatever it did. In a PID namespace every orphan becomes the init's child, so all of it descends from
 * the init (the process the launcher binary started, or the only child of the shell chain's {@code unshare}): it is
 * found by following {@code /proc/<pid>/task/<tid>/children} from there (no scan of {@code /proc}). Signals go to
 * everything below the init (which ignores what it has no handler for); once the command is gone the init exits with
 * its exit code, and the kernel kills whatever else is in the namespace at once. An init that does not end (a workload that keeps forking in a race with the signals) is killed
 * after {@link #INIT_GRACE_NANOS}, and the whole namespace with it.
 */
final class PidNamespace implements InstanceProcesses {
    /** How long the processes below the init get to be killed before the init is killed with them. */
    private static final long INIT_GRACE_NANOS = java.time.Duration.ofSeconds(2).toNanos();
    private static final int MAX_MEMBERS = 1 << 20;

    private final long leader;
    private final long leaderStart;
    private final boolean leaderIsInit;
    private long firstKillAt = -1;

    /**
     * @param leader the pid of the process the supervisor started, and its start time (-1: unknown): the
     *     {@code unshare} that waits for the init, or ({@code leaderIsInit}, the launcher binary) the init itself
     */
    PidNamespace(long leader, long leaderStart, boolean leaderIsInit) {
        this.leader = leader;
        this.leaderStart = leaderStart;
        this.leaderIsInit = leaderIsInit;
    }

    @Override
    public void terminate() {
        below(init()).forEach(pid -> ProcessHandle.of(pid).ifPresent(ProcessHandle::destroy));
    }

    @Override
    public synchronized int killOnce() {
        if (!ProcFs.isAlive(leader, leaderStart)) {
            return 0; // the init is gone (unshare returns only once its child, the init, is gone), and the namespace with it
        }
        long now = System.nanoTime();
        firstKillAt = firstKillAt < 0 ? now : firstKillAt;
        Long init = init();
        if (init == null || now - firstKillAt >= INIT_GRACE_NANOS) {
            ProcessHandle.of(init == null ? leader : init).ifPresent(ProcessHandle::destroyForcibly);
        } else {
            below(init).forEach(pid -> ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly));
        }
        return 1;
    }

    /** The namespace's init (as the host numbers it), or {@code null} if it is gone or not started yet. */
    private Long init() {
        if (!ProcFs.isAlive(leader, leaderStart)) {
            return null;
        }
        if (leaderIsInit) {
            return leader;
        }
        List<Long> children = ProcFs.children(leader);
        return children.isEmpty() ? null : children.get(0);
    }

    /** Every process that descends from {@code init} (not the init itself). */
    private static Set<Long> below(Long init) {
        Set<Long> members = new LinkedHashSet<>();
        if (init == null) {
            return members;
        }
        Deque<Long> frontier = new ArrayDeque<>(ProcFs.children(init));
        while (!frontier.isEmpty() && members.size() < MAX_MEMBERS) {
            long pid = frontier.pop();
            if (members.add(pid)) {
                frontier.addAll(ProcFs.children(pid));
            }
        }
        return members;
    }
}
