package io.slipstream.executor.slurm;

import io.slipstream.api.spec.JobSpec;
import io.slipstream.api.spec.NetworkMode;
import io.slipstream.api.spec.NodeGroupSpec;
import java.util.LinkedHashMap;
import java.util.Map;

/** What of a job the Slurm executor cannot run, by field below {@code spec}, checked when the job is applied. Pure. */
final class SlurmRefusals {
    /** The prefix of the variables the job's wrapper (instance.sh) keeps its own state in. */
    static final String WRAPPER_PREFIX = "_ss_";

    private SlurmRefusals() {
    }

    static Map<String, String> of(JobSpec job) {
        Map<String, String> refusals = new LinkedHashMap<>();
        for (int i = 0; i < job.nodeGroups().size(); i++) {
            NodeGroupSpec group = job.nodeGroups().get(i);
            String at = "nodeGroups[" + i + "].";
            if (group.image() != null) {
                refusals.put(at + "image", "the Slurm executor runs commands on the nodes' own system: it runs no container image (docs/slurm.md)");
            }
            if (group.resources() != null && group.resources().milliCpu() % 1000 != 0) {
                refusals.put(at + "resources.cpu", "Slurm allocates whole CPUs: ask for a whole number of them (is "
                        + io.slipstream.api.spec.Quantities.formatMilliCpu(group.resources().milliCpu()) + ")");
            }
            for (String name : group.env().keySet()) {
                if (name.startsWith(WRAPPER_PREFIX)) {
                    refusals.put(at + "env." + name, "names starting with " + WRAPPER_PREFIX + " are the Slurm executor's wrapper's own");
                }
            }
            for (String name : group.secretEnv().keySet()) {
                if (name.startsWith(WRAPPER_PREFIX)) {
                    refusals.put(at + "secretEnv." + name, "names starting with " + WRAPPER_PREFIX + " are the Slurm executor's wrapper's own");
                }
            }
            if (group.workingDir() != null && (group.workingDir().contains("%") || group.workingDir().contains("\\"))) {
                refusals.put(at + "workingDir", "must hold neither '%' nor '\\' on Slurm (sbatch reads them in --chdir: %j, %u...)");
            }
            if (group.burstsMemory()) {
                refusals.put(at + "limits.memory", "Slurm holds a job to the memory it allocates it: limits.memory above the request cannot be given");
            }
        }
        if (job.network() == NetworkMode.Private) { // asked for (images would ask too: they are refused above)
            refusals.put("network", "the Slurm executor runs instances on the nodes' own network: say network: Host");
        }
        return refusals;
    }
}
