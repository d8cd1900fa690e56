package io.slipstream.executor.slurm;

import io.slipstream.api.spec.Resources;
import io.slipstream.executor.LaunchSpec;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The {@code sbatch} arguments of one instance's job. The job is pinned to the node Slipstream chose and asks for what
 * Slipstream gave the instance, so that Slurm's cgroups (where the admin enables them) fence exactly that: its CPUs,
 * its memory, its GPUs as {@code --gres=gpu:N}. Its script is the executor's one wrapper ({@link InstanceScript}),
 * always the same text, given the instance's directory; nothing of the tenant's reaches a command line (the command
 * and the environment are files in that directory). Pure.
 */
final class JobSubmission {
    private static final long MIB = 1L << 20;

    private JobSubmission() {
    }

    /**
     * @param name       the job's name ({@link JobName})
     * @param comment    what {@code squeue -o %k} shows of it
     * @param directory  the instance's directory on the shared file system: its logs go there
     * @param workingDir where the command starts
     * @param script     the wrapper script
     */
    static List<String> arguments(SlurmSettings settings, LaunchSpec spec, JobName name, String comment, Path directory, Path workingDir,
                                  Path script, SlurmAccounts.Account account) {
        List<String> args = new ArrayList<>();
        args.add("--parsable");
        if (account != null) {
            // sbatch as root submits for the account (slurm.users); numbers, as the nodes know them.
            args.add("--uid=" + account.uid());
            args.add("--gid=" + account.gid());
        }
        args.add("--job-name=" + name);
        args.add("--comment=" + comment);
        args.add("--partition=" + settings.partition());
        if (settings.qos() != null) {
            args.add("--qos=" + settings.qos());
        }
        if (settings.account() != null) {
            args.add("--account=" + settings.account());
        }
        args.add("--nodelist=" + spec.node());
        args.add("--nodes=1");
        args.add("--ntasks=1");
        Resources resources = spec.resources();
        if (resources != null) {
            args.add("--cpus-per-task=" + cpus(resources.milliCpu()));
            if (resources.memoryBytes() > 0) {
                args.add("--mem=" + mebibytes(resources.memoryBytes()) + "M");
            }
        }
        if (!spec.gpus().isEmpty()) {
            args.add("--gres=gpu:" + spec.gpus().size());
        }
        // Slipstream decides whether an instance that ended runs again, and where: Slurm never puts it back in its queue.
        args.add("--no-requeue");
        // The job's environment is sbatch's, which SlurmCommands sets; the instance's own is a file its wrapper reads.
        args.add("--export=ALL");
        args.add("--chdir=" + workingDir);
        args.add("--output=" + directory.resolve("stdout.log"));
        args.add("--error=" + directory.resolve("stderr.log"));
        args.add(script.toString());
        args.add(directory.toString());
        return args;
    }

    /** Slurm allocates whole CPUs: a fraction asks for the next whole one (jobs with fractions are refused, SlurmRefusals). */
    static long cpus(long milliCpu) {
        return Math.max(1, (milliCpu + 999) / 1000);
    }

    /** Slurm counts memory in MiB: a part of one asks for a whole one. */
    static long mebibytes(long bytes) {
        return Math.max(1, (bytes + MIB - 1) / MIB);
    }

    /** What the job's comment says: whose instance it is, for an admin reading squeue. */
    static String comment(LaunchSpec spec, long epoch) {
        return "slipstream run " + spec.id().runId().value() + " attempt " + spec.id().attempt() + " rank " + spec.id().rank() + " restart "
                + spec.restart() + " (leader epoch " + epoch + ")";
    }
}
