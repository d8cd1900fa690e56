/**
 * What an instance may use on this machine, enforced by the kernel: a cgroup per instance, under a parent of this
 * server's own ({@code slipstream-<key>}, the key from its data directory, so that two servers never touch each
 * other's), on cgroup v2 where the host has its controllers and on v1 where it does not ({@link
 * io.slipstream.executor.local.cgroup.Cgroups#detect}).
 *
 * <p>Rules: a cgroup is made and given its limits as root before its instance starts, and the instance's first process
 * joins it itself ({@code cgroup.procs}, before it drops root), so nothing of the instance ever runs outside it. No
 * cgroup is ever delegated to a run's uid: its files are root's, and only {@link
 * io.slipstream.executor.local.cgroup.CgroupFiles} reads or writes them. What is decided from a request (a limit's
 * value in a file's format) is pure, in {@link io.slipstream.executor.local.cgroup.CgroupLimits}.
 */
package io.slipstream.executor.local.cgroup;
