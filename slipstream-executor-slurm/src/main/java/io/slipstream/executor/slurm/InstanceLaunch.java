package io.slipstream.executor.slurm;

import io.slipstream.executor.ExecutorException;
import io.slipstream.executor.LaunchSpec;
import io.slipstream.executor.local.files.InstanceDirectory;
import io.slipstream.executor.local.storage.SharedStorage;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Submits one launch of an instance: its directory on the shared file system (as the local executor lays one out), the
 * record of the launch, its run's storage, its secrets, identity tokens, environment, command and probe, then
 * {@code sbatch}. Also finds a launch that was submitted before, by what the directory recorded, else by the job's name
 * in Slurm's queue, so that a launch is never submitted twice.
 */
final class InstanceLaunch {
    private final SlurmSettings settings;
    private final SlurmCommands commands;
    private final SlurmHandles handles;
    private final SharedStorage storage;
    private final Path script;
    private final SlurmAccounts accounts;
    private final List<String> queue;

    InstanceLaunch(SlurmSettings settings, SlurmCommands commands, SlurmHandles handles, SharedStorage storage, Path script,
                   SlurmAccounts accounts, List<String> queue) {
        this.accounts = accounts;
        this.queue = queue;
        this.settings = settings;
        this.commands = commands;
        this.handles = handles;
        this.storage = storage;
        this.script = script;
    }

    /**
     * The account the instance's job runs as ({@code null}: the server's own).
     *
     * @throws ExecutorException if its workspace has none and may not share one
     */
    SlurmAccounts.Account accountOf(LaunchSpec spec) {
        return accounts.of(spec.metadata() == null ? null : spec.metadata().workspace());
    }

    /**
     * Submits the launch's job and returns its handle; the caller holds the epoch fence ({@code epoch}). {@code dir} is
     * shared with {@code account}'s group ({@link SlurmHandles#directoryOf(io.slipstream.api.run.InstanceId, SlurmAccounts.Account)}).
     */
    Map<String, String> submit(LaunchSpec spec, SlurmNode node, InstanceDirectory dir, SlurmAccounts.Account account, long epoch) {
        Map<String, String> launch = SlurmHandles.launch(spec.id(), node.name(), epoch, spec.restart(), account);
        Integer uid = account == null ? null : account.uid();
        try {
            dir.createParents(handles.root(), uid);
            Path workingDir = dir.create(uid, spec.workingDir());
            if (account != null) {
                giveLogs(dir, account); // sbatch opens them as the job's account, which cannot create files in the directory
            }
            if (spec.restart() > 0) {
                dir.recordRestart(spec.restart());
            }
            dir.recordEpoch("launch", epoch);
            handles.writeLaunch(dir, launch);
            SharedStorage.Prepared shared = spec.metadata() == null ? null : storage.prepare(spec.metadata());
            Path secretsDir = spec.secretFiles().isEmpty() ? null : dir.writeSecrets(spec.secretFiles(), uid);
            if (!spec.identity().isEmpty()) {
                dir.writeIdentity(spec.identity(), uid);
            }
            dir.writeEnvironment(SlurmEnvironment.of(spec, node.info(), dir, shared, secretsDir, settings.inheritEnv()));
            InstanceScript.writeCommand(dir.path(), spec.command());
            if (spec.probe() != null) {
                InstanceScript.writeProbe(dir.path(), spec.probe());
            }
            JobName name = JobName.of(settings.jobNamePrefix(), spec.id(), spec.restart());
            List<String> arguments = JobSubmission.arguments(settings, spec, name, JobSubmission.comment(spec, epoch), dir.path(), workingDir, script,
                    account);
            String job;
            try {
                job = jobId(commands.run("sbatch", arguments));
            } catch (RuntimeException e) {
                cancelByName(name); // sbatch may have submitted before it failed or timed out: no job of a failed launch is left
                throw e;
            }
            Map<String, String> handle = SlurmHandles.withJob(launch, job);
            handles.writeHandle(dir, handle);
            return handle;
        } catch (IOException | RuntimeException e) {
            removeSecrets(dir);
            throw new ExecutorException("cannot start instance " + spec.id() + " on Slurm node " + node.name() + ": " + e.getMessage(), e);
        }
    }

    /** Cancels whatever job of that name is in the partition (a launch that failed leaves none behind); failures are said. */
    private void cancelByName(JobName name) {
        try {
            commands.run("scancel", "--name=" + name, "--partition=" + settings.partition());
        } catch (RuntimeException e) {
            org.slf4j.LoggerFactory.getLogger(InstanceLaunch.class).warn("cannot cancel a job named {} that a failed sbatch may have submitted: {}",
                    name, e.getMessage());
        }
    }

    /** The job id sbatch --parsable printed ({@code 123}, or {@code 123;cluster}). */
    static String jobId(String output) {
        String id = output.trim().split(";", 2)[0].trim();
        if (!id.matches("\\d{1,20}")) {
            throw new ExecutorException("sbatch printed no job id: " + output.trim());
        }
        return id;
    }

    /**
     * The handle of the launch this directory records, whether or not the server recorded its job: a server that crashed
     * just after sbatch finds the job's id where its wrapper wrote it, or by the job's name in Slurm's queue. Empty when
     * no job was submitted for it (or none is left that could still run).
     *
     * @throws ExecutorException if Slurm's queue cannot be read: whether the job was submitted cannot be told then
     */
    Optional<Map<String, String>> submitted(InstanceDirectory dir, io.slipstream.api.run.InstanceId id) throws IOException {
        Optional<Map<String, String>> handle = handles.handle(dir);
        if (handle.isPresent()) {
            return handle;
        }
        Optional<Map<String, String>> launch = handles.launchRecord(dir);
        if (launch.isEmpty()) {
            return Optional.empty();
        }
        // The job id its wrapper recorded is the workload's to write: it counts only as a job of the launch's name.
        String recorded = InstanceScript.recordedJob(dir.path());
        if (recorded != null && !SlurmHandles.isJobId(recorded)) {
            org.slf4j.LoggerFactory.getLogger(InstanceLaunch.class).warn("ignoring what {} holds: not a Slurm job id",
                    dir.path().resolve(InstanceScript.SLURM_JOB));
        }
        JobName name = JobName.of(settings.jobNamePrefix(), id, io.slipstream.executor.Executor.restartOf(launch.get()));
        List<String> arguments = ofTheLaunchsAccount(queue, launch.get());
        arguments.add("--name=" + name);
        List<String> named = JobState.readLiveJobsNamed(commands, arguments, name.toString());
        String job = named.contains(recorded) ? recorded
                : !named.isEmpty() ? named.get(0)
                : SlurmHandles.isJobId(recorded) ? recorded // ended, and perhaps forgotten by Slurm: submitted all the same
                : null;
        if (job == null) {
            return Optional.empty();
        }
        Map<String, String> found = SlurmHandles.withJob(launch.get(), job);
        handles.writeHandle(dir, found);
        return Optional.of(found);
    }

    /**
     * {@code queue}'s squeue arguments held to the jobs of the account the launch runs as (its uid, else the server's own):
     * any account may submit a job of any name into the partition, and a job of another account's is never the launch's.
     */
    static List<String> ofTheLaunchsAccount(List<String> queue, Map<String, String> launch) {
        Integer uid = SlurmHandles.uidOf(launch);
        List<String> arguments = new java.util.ArrayList<>();
        for (String argument : queue) {
            arguments.add(argument.equals("--me") || argument.startsWith("--user=") ? (uid == null ? "--me" : "--user=" + uid) : argument);
        }
        return arguments;
    }

    /**
     * Makes the job's log files, empty, the account's: in the server's directory (which the account cannot write) they
     * are opened, never made, so nothing the workload does puts a link or another file in their place.
     */
    private static void giveLogs(InstanceDirectory dir, SlurmAccounts.Account account) throws IOException {
        for (Path log : List.of(dir.logs().of(io.slipstream.executor.LogStream.STDOUT), dir.logs().of(io.slipstream.executor.LogStream.STDERR))) {
            if (!java.nio.file.Files.exists(log, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
                java.nio.file.Files.createFile(log, java.nio.file.attribute.PosixFilePermissions.asFileAttribute(
                        java.nio.file.attribute.PosixFilePermissions.fromString("rw-------")));
            }
            io.slipstream.executor.local.files.SafeFiles.chown(log, account.uid(), account.gid());
        }
    }

    private static void removeSecrets(InstanceDirectory dir) {
        try {
            dir.removeSecrets();
        } catch (IOException | RuntimeException e) {
            org.slf4j.LoggerFactory.getLogger(InstanceLaunch.class).warn("cannot remove the secret files of {}: {}", dir.path(), e.toString());
        }
    }
}
