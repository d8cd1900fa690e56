package io.slipstream.executor.slurm;

import static org.assertj.core.api.Assertions.assertThat;

import io.slipstream.api.run.InstanceId;
import io.slipstream.api.run.RunId;
import io.slipstream.api.spec.Resources;
import io.slipstream.executor.LaunchSpec;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The sbatch arguments of an instance: pinned, sized, named; nothing of the tenant's on the command line. */
class JobSubmissionTest {
    private static final InstanceId ID = new InstanceId(new RunId("train-7x2k"), 2, 5);
    private static final Path DIR = Path.of("/shared/instances/train-7x2k/2/5");

    private static List<String> arguments(SlurmSettings settings, LaunchSpec spec) {
        return arguments(settings, spec, null);
    }

    private static List<String> arguments(SlurmSettings settings, LaunchSpec spec, SlurmAccounts.Account account) {
        return JobSubmission.arguments(settings, spec, JobName.of(settings.jobNamePrefix(), spec.id(), spec.restart()),
                JobSubmission.comment(spec, 4), DIR, DIR.resolve("work"), Path.of("/var/lib/slipstream/slurm/instance.sh"), account);
    }

    @Test
    void aWorkspacesJobIsSubmittedAsItsAccountByNumber() {
        List<String> args = arguments(SlurmSettings.defaults(Path.of("/shared")), new LaunchSpec(ID, "main-0", "n1", List.of(), List.of("true"),
                Map.of(), null, null), new SlurmAccounts.Account("alice", 1001, 1501));
        assertThat(args).containsSequence("--parsable", "--uid=1001", "--gid=1501");
        assertThat(arguments(SlurmSettings.defaults(Path.of("/shared")), new LaunchSpec(ID, "main-0", "n1", List.of(), List.of("true"),
                Map.of(), null, null))).noneMatch(arg -> arg.startsWith("--uid") || arg.startsWith("--gid"));
    }

    @Test
    void theJobIsPinnedToItsNodeAndAsksForWhatTheInstanceWasGiven() {
        LaunchSpec spec = new LaunchSpec(ID, "worker-5", "gpu-a01", List.of(2, 3), List.of("python", "train.py", "--lr=$(rm -rf /)"),
                Map.of("HF_TOKEN", "secret-value"), null, null, null, null, new Resources(4000, (3L << 30) + 1, 2, "a100")).withRestart(1);
        List<String> args = arguments(SlurmSettings.defaults(Path.of("/shared")).withQos("no-preempt").withAccount("ml"), spec);
        assertThat(args).containsExactly("--parsable", "--job-name=slipstream.train-7x2k.2.5.1",
                "--comment=slipstream run train-7x2k attempt 2 rank 5 restart 1 (leader epoch 4)", "--partition=slipstream", "--qos=no-preempt",
                "--account=ml", "--nodelist=gpu-a01", "--nodes=1", "--ntasks=1", "--cpus-per-task=4", "--mem=3073M", "--gres=gpu:2",
                "--no-requeue", "--export=ALL", "--chdir=" + DIR.resolve("work"), "--output=" + DIR.resolve("stdout.log"),
                "--error=" + DIR.resolve("stderr.log"), "/var/lib/slipstream/slurm/instance.sh", DIR.toString());
        assertThat(String.join(" ", args)).doesNotContain("train.py").doesNotContain("secret-value").doesNotContain("--wrap");
    }

    @Test
    void withoutResourcesSlurmsDefaultsApply() {
        List<String> args = arguments(SlurmSettings.defaults(Path.of("/shared")), new LaunchSpec(ID, "main-0", "n1", List.of(), List.of("true"),
                Map.of(), null, null));
        assertThat(args).noneMatch(arg -> arg.startsWith("--cpus-per-task") || arg.startsWith("--mem") || arg.startsWith("--gres")
                || arg.startsWith("--qos") || arg.startsWith("--account"));
    }

    @Test
    void fractionsAreRoundedUpToWhatSlurmAllocates() {
        assertThat(JobSubmission.cpus(1)).isEqualTo(1);
        assertThat(JobSubmission.cpus(0)).isEqualTo(1);
        assertThat(JobSubmission.cpus(2000)).isEqualTo(2);
        assertThat(JobSubmission.cpus(2001)).isEqualTo(3);
        assertThat(JobSubmission.mebibytes(1)).isEqualTo(1);
        assertThat(JobSubmission.mebibytes(1L << 30)).isEqualTo(1024);
        assertThat(JobSubmission.mebibytes(1_000_000_000)).isEqualTo(954);
    }

    @Test
    void aJobsNameFindsItsInstanceAndLaunch() {
        JobName name = JobName.of("slipstream", ID, 3);
        assertThat(name).hasToString("slipstream.train-7x2k.2.5.3");
        assertThat(JobName.parse("slipstream", name.toString())).isEqualTo(name);
        assertThat(JobName.parse("other", name.toString())).isNull();
        assertThat(JobName.parse("slipstream", "slipstream.train.x.5.3")).isNull();
        assertThat(JobName.parse("slipstream", "interactive")).isNull();
        assertThat(InstanceLaunch.jobId("4711\n")).isEqualTo("4711");
        assertThat(InstanceLaunch.jobId("4711;cluster-b\n")).isEqualTo("4711");
    }
}
