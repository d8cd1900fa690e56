package io.slipstream.executor.local.process;

import io.slipstream.executor.local.cgroup.InstanceCgroup;
import java.io.IOException;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An instance in a cgroup of its own: SIGTERM goes to its namespace or tree (the notice is for the workload's own
 * processes to act on), SIGKILL to everything in the cgroup and to its namespace or tree as well. The first round
 * signals what the cgroup lists (an instance that ended has nothing left, or processes already exiting); every later
 * one freezes the cgroup first, so that nothing forks faster than the kill.
 */
final class CgroupProcesses implements InstanceProcesses {
    private static final Logger LOG = LoggerFactory.getLogger(CgroupProcesses.class);

    private final InstanceCgroup cgroup;
    private final InstanceProcesses found;
    private final AtomicInteger rounds = new AtomicInteger();

    CgroupProcesses(InstanceCgroup cgroup, InstanceProcesses found) {
        this.cgroup = cgroup;
        this.found = found;
    }

    @Override
    public void terminate() {
        found.terminate();
    }

    @Override
    public int killOnce() {
        int killed = 0;
        try {
            killed = rounds.getAndIncrement() == 0 ? cgroup.signalAll() : cgroup.killAll();
        } catch (IOException | RuntimeException e) {
            LOG.warn("cannot kill through {}: {}; killing its processes one by one", cgroup, e.toString());
        }
        return killed + found.killOnce();
    }

    @Override
    public String toString() {
        return "processes in " + cgroup + " and " + found;
    }
}
