package io.slipstream.executor.slurm;

import io.slipstream.api.run.InstanceId;
import io.slipstream.api.run.RunId;

/**
 * The name of an instance's Slurm job: {@code <prefix>.<run>.<attempt>.<rank>.<restart>}
 * ({@code slipstream.train-7x2k.1.0.0}). Run ids hold no dot, so the name parses back; it names one launch of one
 * instance, and so finds the job again after a restart of the server, before the server had recorded it
 * ({@code squeue --name}).
 */
record JobName(String prefix, InstanceId id, int restart) {
    static JobName of(String prefix, InstanceId id, int restart) {
        return new JobName(prefix, id, restart);
    }

    /** The job name this executor gave, or {@code null} for any other (another prefix, a job not Slipstream's). */
    static JobName parse(String prefix, String name) {
        String[] parts = name.split("\\.");
        if (parts.length != 5 || !parts[0].equals(prefix) || !RunId.isValid(parts[1])) {
            return null;
        }
        try {
            InstanceId id = new InstanceId(new RunId(parts[1]), Integer.parseInt(parts[2]), Integer.parseInt(parts[3]));
            return new JobName(prefix, id, Integer.parseInt(parts[4]));
        } catch (IllegalArgumentException e) {
            return null;
        }
    }

    @Override
    public String toString() {
        return prefix + "." + id.runId().value() + "." + id.attempt() + "." + id.rank() + "." + restart;
    }
}
