package io.slipstream.executor.local.process;

import io.slipstream.executor.local.cgroup.InstanceCgroup;
import java.io.IOException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An instance in a cgroup of its own: SIGTERM goes to its namespace or tree (the notice is for the workload's own
 * processes to act on), SIGKILL to everything in the cgroup, frozen first so that nothing forks faster than the kill, and
 * to its namespace or tree as well.
 */
record CgroupProcesses(InstanceCgroup cgroup, InstanceProcesses found) implements InstanceProcesses {
    private static final Logger LOG = LoggerFactory.getLogger(CgroupProcesses.class);

    @Override
    public void terminate() {
        found.terminate();
    }

    @Override
    public int killOnce() {
        int killed = 0;
        try {
            killed = cgroup.killAll();
        } catch (IOException | RuntimeException e) {
            LOG.warn("cannot kill through {}: {}; killing its processes one by one", cgroup, e.toString());
        }
        return killed + found.killOnce();
    }
}
