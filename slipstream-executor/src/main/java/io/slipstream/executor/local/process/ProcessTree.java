package io.slipstream.executor.local.process;

import java.util.List;

/**
 * Signals every process of an instance: its session, its process group, and their descendants (see
 * {@link ProcFs#treeOf}). Nothing is signalled if the leader's pid now belongs to another process: the kernel
 * reuses a pid only once its session and group are empty, so a live pid with another start time means that
 * nothing of the instance is left.
 */
final class ProcessTree implements InstanceProcesses {
    private final long leader;
    private final long leaderStart;
    private final long supervisor;

    /** @param supervisor the pid of the supervisor that started the leader (-1: unknown) */
    ProcessTree(long leader, long leaderStart, long supervisor) {
        this.leader = leader;
        this.leaderStart = leaderStart;
        this.supervisor = supervisor;
    }

    private List<Long> members() {
        boolean reused = leaderStart >= 0 && ProcFs.stat(leader).map(s -> s.startTime() != leaderStart).orElse(false);
        return reused ? List.of() : ProcFs.treeOf(leader, leaderStart, supervisor);
    }

    /** SIGTERM to every live process of the tree, once. */
    @Override
    public void terminate() {
        members().forEach(pid -> ProcessHandle.of(pid).ifPresent(ProcessHandle::destroy));
    }

    /** One round of SIGKILL; returns how many processes were still alive to receive it. */
    @Override
    public int killOnce() {
        List<Long> live = members();
        live.forEach(pid -> ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly));
        return live.size();
    }
}
