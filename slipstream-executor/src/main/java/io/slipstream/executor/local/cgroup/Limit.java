package io.slipstream.executor.local.cgroup;

/** What the kernel can hold an instance to, each through its own controller. */
public enum Limit {
    /** {@code memory}: the request (or {@code limits.memory}) is a hard limit; past it the instance is OOMKilled. */
    memory,
    /** {@code cpu}: a CFS quota of the requested cores. */
    cpu,
    /** {@code cpuset}: the cores of its node's {@code cpuset}, where the node declares one, and no other. */
    cpuset,
    /** {@code pids}: the most processes and threads an instance may have. */
    pids,
    /** {@code devices}: only the instance's own GPUs (and the devices every process needs) can be opened. */
    devices,
    /** {@code freezer} or {@code cgroup.kill}: a stop kills every process of the instance, however fast it forks. */
    kill
}
