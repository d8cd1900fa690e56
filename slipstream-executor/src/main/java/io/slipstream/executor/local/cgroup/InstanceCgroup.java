package io.slipstream.executor.local.cgroup;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;

/** One instance's cgroup: on v1 a directory in each controller's hierarchy, on v2 one directory. */
public interface InstanceCgroup {
    /** Where it is under the hierarchy's root: {@code <parent>/<name>}. */
    String name();

    /**
     * The {@code cgroup.procs} files the instance's first process writes {@code 0} into (itself) before it drops root,
     * so that it and everything it starts run inside.
     */
    List<Path> procsFiles();

    /**
     * SIGKILL to every process inside, frozen first so that none forks a new one meanwhile ({@code cgroup.kill} where
     * the kernel has it); how many there were (0: nothing of the instance is left).
     */
    int killAll() throws IOException;

    /**
     * SIGKILL to every process inside as listed now, without freezing ({@code cgroup.kill} where the kernel has it: that
     * is atomic); how many there were. Cheaper than {@link #killAll}, and enough unless something forks meanwhile: a
     * stop's first round, whose next rounds freeze.
     */
    int signalAll() throws IOException;

    /** What the kernel counted: OOM kills, the memory peak, the CPU time. */
    CgroupUsage usage() throws IOException;

    /** Removes it once empty; {@code false} if processes remain (kill them first) or it was gone. */
    boolean remove() throws IOException;
}
