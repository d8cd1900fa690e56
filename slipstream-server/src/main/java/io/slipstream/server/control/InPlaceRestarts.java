package io.slipstream.server.control;

import io.slipstream.api.problem.Problems;
import io.slipstream.api.spec.FaultTolerance;
import io.slipstream.api.spec.JobSpec;

/**
 * What of a job needs an executor that launches an ended instance again under its id ({@code Executor#restartsInPlace}):
 * an Async run restarts one failed rank so, an elastic run every rank at each change of its size.
 */
public final class InPlaceRestarts {
    private InPlaceRestarts() {
    }

    /** Adds a problem for each such need, named by its field under {@code prefix}, when the executor has no such restarts. */
    public static void check(JobSpec job, boolean restartsInPlace, String prefix, Problems problems) {
        if (restartsInPlace) {
            return;
        }
        if (job.faultTolerance().runType() == FaultTolerance.RunType.Async) {
            problems.add(prefix + "spec.faultTolerance.runType",
                    "Async is not supported by this server's executor, which cannot restart one instance in place (use Sync)");
        }
        for (int i = 0; i < job.nodeGroups().size(); i++) {
            if (job.nodeGroups().get(i).elastic()) {
                problems.add(prefix + "spec.nodeGroups[" + i + "].minReplicas",
                        "elastic groups are not supported by this server's executor, which cannot restart instances in place "
                                + "(a change of size restarts them): leave minReplicas out");
            }
        }
    }
}
