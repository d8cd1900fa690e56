package io.slipstream.executor.local;

import io.slipstream.api.spec.JobSpec;
import io.slipstream.executor.LaunchSpec;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Whether an instance may use more memory than it asked for, up to its node group's {@code limits.memory}
 * ({@code instances.burstableMemory}): the admin's choice, since what is above a request is memory the scheduler never
 * counted, and on one machine an instance that bursts takes it from the others. Pure.
 */
final class MemoryBursts {
    private final boolean allowed;

    MemoryBursts(boolean allowed) {
        this.allowed = allowed;
    }

    /** Where bursts are not allowed, each group whose {@code limits.memory} is above its request, by field below {@code spec}. */
    Map<String, String> refusals(JobSpec job) {
        Map<String, String> refusals = new LinkedHashMap<>();
        for (int i = 0; i < job.nodeGroups().size() && !allowed; i++) {
            if (job.nodeGroups().get(i).burstsMemory()) {
                refusals.put("nodeGroups[" + i + "].limits.memory",
                        "this server holds instances to their memory request (instances.burstableMemory: false)");
            }
        }
        return refusals;
    }

    /**
     * The launch as this server runs it: where bursts are not allowed, held to its request, whatever its limit (a job
     * applied while they were, or whose shape shrank since, is never let past the admin's choice).
     */
    LaunchSpec limited(LaunchSpec spec) {
        return allowed || spec.memoryLimitBytes() == 0 ? spec : spec.withMemoryLimit(0);
    }
}
