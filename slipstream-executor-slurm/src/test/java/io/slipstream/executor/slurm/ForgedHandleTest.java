package io.slipstream.executor.slurm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.slipstream.api.run.InstanceId;
import io.slipstream.api.run.RunId;
import io.slipstream.executor.EpochFence;
import io.slipstream.executor.ExecutorException;
import io.slipstream.executor.local.files.InstanceDirectory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The workload can write its directory, and so the handle and job id recorded there: what it writes there never reaches a
 * Slurm command as anything but a job id, and a cancel is held to the launch's own job name and partition. Slurm's
 * commands are stand-ins here that record their arguments.
 */
class ForgedHandleTest {
    private static final InstanceId ID = new InstanceId(new RunId("forged"), 1, 0);

    @TempDir
    Path tmp;

    private Path calls;
    private SlurmCommands commands;
    private SlurmSettings settings;
    private SlurmHandles handles;
    private InstanceDirectory dir;
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor();
    private final ExecutorService signals = Executors.newSingleThreadExecutor();

    @BeforeEach
    void setUp() throws Exception {
        Path bin = Files.createDirectories(tmp.resolve("bin"));
        calls = tmp.resolve("calls");
        for (String command : List.of("scancel", "squeue")) {
            Path script = bin.resolve(command);
            Files.writeString(script, "#!/bin/sh\nprintf '%s' \"" + command + "\" >> '" + calls + "'\nfor a in \"$@\"; do printf ' [%s]' \"$a\" >> '"
                    + calls + "'; done\necho >> '" + calls + "'\n");
            Files.setPosixFilePermissions(script, PosixFilePermissions.fromString("rwxr-xr-x"));
        }
        commands = new SlurmCommands(bin, null, Duration.ofSeconds(10));
        settings = SlurmSettings.defaults(tmp.resolve("shared"));
        handles = new SlurmHandles(settings.instancesRoot());
        dir = handles.directoryOf(ID);
        Files.createDirectories(dir.path());
    }

    @AfterEach
    void tearDown() {
        timer.shutdownNow();
        signals.shutdownNow();
    }

    private String calls() throws Exception {
        return Files.exists(calls) ? Files.readString(calls) : "";
    }

    @Test
    void aHandleWhoseJobIsNotAnIdIsIgnored() throws Exception {
        Files.writeString(dir.path().resolve("slurm_handle"), "{\"job\":\"--user=svc\",\"dir\":\"forged/1/0\",\"node\":\"node01\",\"epoch\":\"1\"}");
        assertThat(handles.handle(dir)).isEmpty();
        Files.writeString(dir.path().resolve("slurm_launch"), "{\"job\":\"--user=svc\",\"dir\":\"forged/1/0\",\"node\":\"node01\",\"epoch\":\"1\"}");
        assertThat(handles.launchRecord(dir)).hasValueSatisfying(launch -> assertThat(launch).doesNotContainKey(SlurmHandles.JOB));
        for (String job : List.of("--user=svc", "-1", "12,13", "12 13", "", "123456789012345678901")) {
            assertThatThrownBy(() -> SlurmHandles.withJob(Map.of(), job)).as(job).isInstanceOf(IllegalArgumentException.class);
        }
        assertThat(SlurmHandles.withJob(Map.of(), "123")).containsEntry(SlurmHandles.JOB, "123");
    }

    @Test
    void aForgedJobIdNeverReachesACommandLine() throws Exception {
        Files.writeString(dir.path().resolve("slurm_handle"), "{\"job\":\"--user=svc\",\"dir\":\"forged/1/0\",\"node\":\"node01\",\"epoch\":\"1\"}");
        Files.writeString(dir.path().resolve("slurm_launch"), "{\"dir\":\"forged/1/0\",\"node\":\"node01\",\"epoch\":\"1\"}");
        Files.createDirectories(dir.path().resolve(InstanceScript.REPORT));
        Files.writeString(dir.path().resolve(InstanceScript.REPORT).resolve(InstanceScript.SLURM_JOB), "--user=svc\n");
        InstanceLaunch launch = new InstanceLaunch(settings, commands, handles, null, tmp.resolve("instance.sh"), SlurmAccounts.serversOwn(),
                SlurmExecutor.queueArguments(settings, SlurmAccounts.serversOwn()));
        assertThat(launch.submitted(dir, ID)).as("no job of its name is in the queue").isEmpty();
        Files.writeString(dir.path().resolve(InstanceScript.REPORT).resolve(InstanceScript.SLURM_JOB), "-5\n");
        assertThat(launch.submitted(dir, ID)).isEmpty();

        try (JobWatch watch = new JobWatch(commands, settings, SlurmExecutor.queueArguments(settings, SlurmAccounts.serversOwn()), new EpochFence(settings.sharedDirectory()), Clock.systemUTC(), timer, signals)) {
            assertThatThrownBy(() -> watch.watch(ID, Map.of(SlurmHandles.JOB, "--user=svc"), dir, false)).isInstanceOf(ExecutorException.class);
            assertThat(watch.isWatched(ID)).isFalse();
        }
        assertThat(calls()).doesNotContain("--user").doesNotContain("-5").doesNotContain("scancel");
    }

    /** A queue Slurm cannot read is what /readyz says of the executor, until it answers again. */
    @Test
    void aQueueThatCannotBeReadIsTheExecutorsProblemUntilItAnswers() throws Exception {
        Path squeue = tmp.resolve("bin/squeue");
        Files.writeString(squeue, "#!/bin/sh\necho 'squeue: error: Unable to contact slurm controller (connect failure)' >&2\nexit 1\n");
        try (JobWatch watch = new JobWatch(commands, settings, SlurmExecutor.queueArguments(settings, SlurmAccounts.serversOwn()),
                new EpochFence(settings.sharedDirectory()), Clock.systemUTC(), timer, signals)) {
            watch.watch(ID, SlurmHandles.withJob(SlurmHandles.launch(ID, "node01", 1, 0, null), "77"), dir, false);
            watch.poll();
            assertThat(watch.problem()).startsWith("cannot read Slurm's queue since ").contains("Unable to contact slurm controller");
            Files.writeString(squeue, "#!/bin/sh\necho '77|RUNNING|None|slipstream.forged.1.0.0'\n");
            watch.poll();
            assertThat(watch.problem()).isNull();
        }
    }

    @Test
    void aCancelNamesTheLaunchsJobNameAndPartitionAndPutsTheIdAfterDashDash() {
        WatchedJob job = new WatchedJob(ID, SlurmHandles.withJob(SlurmHandles.launch(ID, "node01", 1, 2, null), "77"), dir,
                JobName.of(settings.jobNamePrefix(), ID, 2).toString());
        assertThat(JobWatch.cancelArguments(settings, job, "--signal=KILL", "--batch"))
                .containsExactly("--signal=KILL", "--batch", "--name=slipstream.forged.1.0.2", "--partition=slipstream", "--", "77");
        assertThat(JobWatch.cancelArguments(settings, job)).containsExactly("--name=slipstream.forged.1.0.2", "--partition=slipstream", "--", "77");
    }

    @Test
    void aJobOfAnotherNameIsNotTheLaunchs() {
        JobState state = JobState.parseAll("m|77|RUNNING|None|someone.elses.job\n", "m").get("77");
        assertThat(state.named("slipstream.forged.1.0.0")).isFalse();
        assertThat(JobState.parseAll("m|77|RUNNING|None|slipstream.forged.1.0.0\n", "m").get("77").named("slipstream.forged.1.0.0")).isTrue();
    }

    /** sbatch may submit and then fail (or time out): whatever job of the launch's name it left is cancelled. */
    @Test
    void aFailedSbatchCancelsWhatItMayHaveSubmittedByName() throws Exception {
        Path sbatch = tmp.resolve("bin/sbatch");
        Files.writeString(sbatch, "#!/bin/sh\necho 'sbatch: error: Socket timed out' >&2\nexit 1\n");
        Files.setPosixFilePermissions(sbatch, PosixFilePermissions.fromString("rwxr-xr-x"));
        InstanceLaunch launch = new InstanceLaunch(settings, commands, handles, null, tmp.resolve("instance.sh"), SlurmAccounts.serversOwn(),
                SlurmExecutor.queueArguments(settings, SlurmAccounts.serversOwn()));
        io.slipstream.executor.LaunchSpec spec = new io.slipstream.executor.LaunchSpec(ID, "main-0", "node01", List.of(), List.of("true"),
                Map.of(), null, null, null, null, null);
        SlurmNode node = SlurmNode.parse("node01|8|1000|(null)|(null)|idle|node01|node01|none", "gpu", why -> { });
        assertThatThrownBy(() -> launch.submit(spec, node, dir, null, 1)).isInstanceOf(ExecutorException.class).hasMessageContaining("Socket timed out");
        assertThat(calls()).contains("scancel [--name=slipstream.forged.1.0.0] [--partition=slipstream]");
    }
}
