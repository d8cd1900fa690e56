package io.slipstream.executor.local;

import io.slipstream.api.run.InstanceId;
import io.slipstream.executor.local.cgroup.CgroupUsage;
import io.slipstream.executor.local.cgroup.InstanceCgroup;
import java.io.IOException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** What an ended instance's cgroup counted, read before the cgroup is removed (nothing of the instance runs by then). */
final class CgroupEnd {
    private static final Logger LOG = LoggerFactory.getLogger(CgroupEnd.class);

    private CgroupEnd() {
    }

    /** Its usage ({@link CgroupUsage#UNKNOWN} without a cgroup or when it cannot be read); the cgroup is removed. */
    static CgroupUsage usageAndRemove(InstanceId id, InstanceCgroup cgroup) {
        if (cgroup == null) {
            return CgroupUsage.UNKNOWN;
        }
        CgroupUsage usage = CgroupUsage.UNKNOWN;
        try {
            usage = cgroup.usage();
            LOG.debug("instance {} ended: {}", id, usage);
        } catch (IOException | RuntimeException e) {
            LOG.warn("cannot read what the cgroup of instance {} counted: {}", id, e.toString());
        }
        try {
            if (!cgroup.remove()) {
                LOG.debug("the cgroup of instance {} was gone or still busy", id);
            }
        } catch (IOException | RuntimeException e) {
            LOG.warn("cannot remove the cgroup of instance {}: {}", id, e.toString());
        }
        return usage;
    }
}
