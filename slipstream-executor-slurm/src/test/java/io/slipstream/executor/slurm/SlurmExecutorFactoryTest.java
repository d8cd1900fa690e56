package io.slipstream.executor.slurm;

import static org.assertj.core.api.Assertions.assertThat;

import io.slipstream.api.codec.DocumentParser;
import io.slipstream.api.problem.Problem;
import io.slipstream.api.problem.Problems;
import io.slipstream.api.spec.FieldReader;
import io.slipstream.executor.ExecutorFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.ServiceLoader;
import org.junit.jupiter.api.Test;

/** The Slurm executor's part of the config file: its {@code slurm:} block. */
class SlurmExecutorFactoryTest {
    private final SlurmExecutorFactory factory = new SlurmExecutorFactory(() -> false);
    private final Problems problems = new Problems();

    private SlurmSettings read(String yaml) {
        return factory.read(FieldReader.of(DocumentParser.parseOne(yaml.getBytes(StandardCharsets.UTF_8)), "", problems));
    }

    @Test
    void theServiceLoaderFindsItByName() {
        assertThat(ServiceLoader.load(ExecutorFactory.class).stream().map(p -> p.get().name())).contains("slurm");
        assertThat(factory.configFields()).containsExactly("slurm");
    }

    @Test
    void theSharedDirectoryAndTrustedTenantsAreAllItNeeds() {
        assertThat(read("slurm: {sharedDirectory: /shared/slipstream, trustedTenants: true}"))
                .isEqualTo(SlurmSettings.defaults(Path.of("/shared/slipstream")).withTrustedTenants(true));
        assertThat(problems.list()).isEmpty();
        SlurmSettings defaults = SlurmSettings.defaults(Path.of("/shared/slipstream"));
        assertThat(defaults.partition()).isEqualTo("slipstream");
        assertThat(defaults.commandTimeout()).as("below the epoch fence's wait for a launch").isLessThan(io.slipstream.executor.EpochFence.LOCK_WAIT);
        assertThat(SlurmSettings.MAX_COMMAND_TIMEOUT).isLessThan(io.slipstream.executor.EpochFence.LOCK_WAIT);
        assertThat(defaults.inheritEnv()).doesNotContain("HOME", "USER", "LOGNAME");
        assertThat(defaults.instancesRoot()).isEqualTo(Path.of("/shared/slipstream/instances"));
    }

    @Test
    void everyFieldIsRead() {
        SlurmSettings settings = read("""
                slurm:
                  partition: ml
                  qos: slipstream-noprempt
                  account: ml-platform
                  sharedDirectory: /lustre/slipstream
                  slurmConf: /etc/slurm/slurm.conf
                  commands: /opt/slurm/bin
                  commandTimeout: 10s
                  pollInterval: 1s
                  nodeRefresh: 30s
                  startTimeout: 2m
                  ports: 40000-40999
                  gpuModel: H100_80GB
                  jobNamePrefix: ss-prod
                  inheritEnv: [PATH, LANG]
                  trustedTenants: true
                  allowRootJobs: true
                """);
        assertThat(problems.list()).isEmpty();
        assertThat(settings).isEqualTo(new SlurmSettings("ml", "slipstream-noprempt", "ml-platform", Path.of("/lustre/slipstream"),
                Path.of("/etc/slurm/slurm.conf"), Path.of("/opt/slurm/bin"), Duration.ofSeconds(10), Duration.ofSeconds(1), Duration.ofSeconds(30),
                Duration.ofMinutes(2), 40_000, 40_999, "h100-80gb", "ss-prod", List.of("PATH", "LANG"), true, true, Map.of(), null));
    }

    @Test
    void accountsByWorkspaceAreReadAndABadOneIsNamed() {
        Problems asRoot = new Problems();
        SlurmSettings settings = new SlurmExecutorFactory(() -> true).read(FieldReader.of(DocumentParser.parseOne("""
                slurm:
                  sharedDirectory: /shared
                  users: {team-a: alice, Team_B: bob, team-c: "--uid=0", team-d: 7}
                """.getBytes(StandardCharsets.UTF_8)), "", asRoot));
        assertThat(asRoot.list()).extracting(Problem::field).containsExactly("slurm.users.Team_B", "slurm.users.team-c", "slurm.users.team-d");
        assertThat(settings.users()).isEqualTo(Map.of("team-a", "alice"));
        read("slurm: {sharedDirectory: /shared, users: {team-a: alice}, defaultUser: svc}");
        assertThat(problems.list()).extracting(Problem::field).as("not root; a shared default without trust").contains("slurm.users");
    }

    @Test
    void withoutASharedDirectoryItSaysWhatIsMissing() {
        assertThat(read("{}")).isNull();
        assertThat(problems.list()).extracting(Problem::field).containsExactly("slurm.sharedDirectory");
    }

    @Test
    void itStartsOnlyForTrustedTenantsAndAsRootOnlyWhenRootJobsAreAllowed() {
        read("slurm: {sharedDirectory: /shared}");
        assertThat(problems.list()).singleElement().satisfies(problem -> {
            assertThat(problem.field()).isEqualTo("slurm.trustedTenants");
            assertThat(problem.toString()).contains("one Unix account").contains("secrets").contains("cancel their jobs");
        });
        Problems asRoot = new Problems();
        new SlurmExecutorFactory(() -> true).read(FieldReader.of(DocumentParser.parseOne(
                "slurm: {sharedDirectory: /shared, trustedTenants: true}".getBytes(StandardCharsets.UTF_8)), "", asRoot));
        assertThat(asRoot.list()).extracting(Problem::field).containsExactly("slurm.allowRootJobs");
        Problems allowed = new Problems();
        new SlurmExecutorFactory(() -> true).read(FieldReader.of(DocumentParser.parseOne(
                "slurm: {sharedDirectory: /shared, trustedTenants: true, allowRootJobs: true}".getBytes(StandardCharsets.UTF_8)), "", allowed));
        assertThat(allowed.list()).isEmpty();

        SlurmSettings settings = SlurmSettings.defaults(Path.of("/shared"));
        assertThat(settings.startRefusal(false).toString()).startsWith("slurm.trustedTenants must be true");
        assertThat(settings.withTrustedTenants(true).startRefusal(true).toString()).startsWith("slurm.allowRootJobs must be true")
                .contains("tenant code then runs as root on the nodes");
        assertThat(settings.withTrustedTenants(true).startRefusal(false)).isNull();
        assertThat(settings.withTrustedTenants(true).withAllowRootJobs(true).startRefusal(true)).isNull();
    }

    @Test
    void everyMistakeIsNamed() {
        read("""
                slurm:
                  sharedDirectory: "/shared/%j"
                  partition: "gpu,debug"
                  qos: "a b"
                  slurmConf: relative/slurm.conf
                  commandTimeout: 30s
                  pollInterval: 10ms
                  startTimeout: 1s
                  ports: 80-90
                  gpuModel: "--"
                  jobNamePrefix: Slip.Stream
                  inheritEnv: ["1X"]
                  trustedTenants: false
                  wrap: "echo hi"
                """);
        assertThat(problems.list()).filteredOn(problem -> problem.field().equals("slurm.commandTimeout")).singleElement()
                .satisfies(problem -> assertThat(problem.message()).contains("15s").contains("20s"));
        assertThat(problems.list()).extracting(Problem::field).containsExactlyInAnyOrder("slurm.sharedDirectory", "slurm.partition", "slurm.qos",
                "slurm.slurmConf", "slurm.commandTimeout", "slurm.pollInterval", "slurm.startTimeout", "slurm.ports", "slurm.gpuModel",
                "slurm.jobNamePrefix", "slurm.inheritEnv[0]", "slurm.trustedTenants", "slurm.wrap");
    }
}
