package io.slipstream.server.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.slipstream.api.problem.InvalidInputException;
import io.slipstream.api.problem.Problem;
import io.slipstream.api.spec.Resources;
import io.slipstream.executor.NodeInfo;
import io.slipstream.executor.kubernetes.KubernetesConfig;
import io.slipstream.executor.kubernetes.KubernetesExecutorFactory;
import io.slipstream.executor.local.LocalExecutorFactory;
import io.slipstream.executor.local.LocalExecutorSettings;
import io.slipstream.executor.local.LocalProcessExecutor;
import io.slipstream.executor.local.uid.Isolation;
import io.slipstream.executor.local.uid.UidRangeClaims;
import io.slipstream.scheduler.FairSharingPreemption;
import io.slipstream.store.jdbc.JdbcStoreFactory;
import io.slipstream.store.jdbc.JdbcStoreSettings;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

class ConfigReaderTest {
    private static final Supplier<NodeInfo> MACHINE = () -> new NodeInfo("this-machine",
            new Resources(16_000, 128L << 30, 1, "nvidia-h200"), List.of("GPU-0a1b"), Map.of());
    /** The plug-ins of the class path, but a local executor that describes a machine of the test's. */
    private static final Plugins PLUGINS = new Plugins(List.of(new LocalExecutorFactory(MACHINE), new KubernetesExecutorFactory()),
            List.of(new JdbcStoreFactory.H2(), new JdbcStoreFactory.Postgresql()));
    private static final ServerConfig DEFAULTS = ConfigReader.defaults(Path.of("data"), PLUGINS);

    private static ServerConfig read(String yaml) {
        return ConfigReader.read(yaml.getBytes(StandardCharsets.UTF_8), DEFAULTS, Map.of(), PLUGINS);
    }

    private static LocalExecutorSettings local(ServerConfig config) {
        return config.executor(LocalExecutorSettings.class);
    }

    private static JdbcStoreSettings store(ServerConfig config) {
        return (JdbcStoreSettings) config.store();
    }

    private static List<Problem> problemsOf(String yaml) {
        try {
            read(yaml);
        } catch (InvalidInputException e) {
            return e.problems();
        }
        throw new AssertionError("expected the config to be rejected");
    }

    @Test
    void defaultsAreFourSimulatedGpuNodesOnLoopback() {
        assertThat(DEFAULTS.host()).isEqualTo("127.0.0.1");
        assertThat(DEFAULTS.port()).isEqualTo(8080);
        assertThat(local(DEFAULTS).nodes()).extracting(NodeInfo::name).containsExactly("node-1", "node-2", "node-3", "node-4");
        assertThat(local(DEFAULTS).nodes().get(0).capacity()).isEqualTo(new Resources(32_000, 256L << 30, 8, "sim-gpu"));
        assertThat(local(DEFAULTS).inheritEnv()).isEqualTo(LocalProcessExecutor.DEFAULT_INHERITED_ENV);
        assertThat(DEFAULTS.store()).isEqualTo(JdbcStoreSettings.embedded());
        assertThat(ConfigReader.defaults(Path.of("data"))).as("with the plug-ins of the class path").isEqualTo(DEFAULTS);
    }

    @Test
    void readsEverySection() {
        ServerConfig config = read("""
                server: {host: 0.0.0.0, port: 9090}
                store: {url: "jdbc:postgresql://db:5432/slipstream", username: s, password: p}
                executor: local
                nodes:
                  - {namePrefix: gpu, count: 2, cpu: 64, memory: 512Gi, gpu: 8, gpuModel: h100}
                  - {name: cpu-only, cpu: "500m", memory: 1Gi, labels: {zone: b}}
                instances: {inheritEnv: [PATH], gracePeriod: 5s, isolation: "on", uidRange: 300000-300999, uidClaims: /srv/uids, logLimit: 2Gi}
                """);
        assertThat(config.host()).isEqualTo("0.0.0.0");
        assertThat(config.port()).isEqualTo(9090);
        assertThat(config.store()).isEqualTo(new JdbcStoreSettings("postgresql", "jdbc:postgresql://db:5432/slipstream", "s", "p"));
        assertThat(config.store().toString()).doesNotContain("p]");
        LocalExecutorSettings local = local(config);
        assertThat(local.nodes()).extracting(NodeInfo::name).containsExactly("gpu-1", "gpu-2", "cpu-only");
        assertThat(local.nodes().get(2).capacity()).isEqualTo(new Resources(500, 1L << 30, 0, null));
        assertThat(local.nodes().get(2).labels()).containsEntry("zone", "b");
        assertThat(local.inheritEnv()).containsExactly("PATH");
        assertThat(config.limits().gracePeriod()).isEqualTo(Duration.ofSeconds(5));
        assertThat(local.isolation()).isEqualTo(Isolation.Mode.on);
        assertThat(local.uidRange()).isEqualTo(new UidRangeClaims.Range(300_000, 1000));
        assertThat(local.uidClaims()).isEqualTo(java.nio.file.Path.of("/srv/uids"));
        assertThat(local.logLimit()).isEqualTo(2L << 30);
    }

    @Test
    void autoDescribesThisMachine() {
        ServerConfig config = read("nodes: auto\n");
        assertThat(local(config).nodes()).singleElement().satisfies(node -> {
            assertThat(node.name()).isEqualTo("this-machine");
            assertThat(node.gpuId(0)).isEqualTo("GPU-0a1b");
        });
    }

    @Test
    void everyMistakeIsNamed() {
        assertThat(problemsOf("""
                server: {port: 70000, hots: x}
                store: {url: "mysql://x"}
                executor: nomad
                nodes:
                  - {name: Bad_Name, cpu: 1, memory: 1Gi}
                  - {name: n, cpu: -2, memory: lots, gpu: 4}
                  - {namePrefix: n, count: 1, name: m, cpu: 1, memory: 1Gi}
                instances: {gracePeriod: soon, inheritEnv: ["1X"], isolation: sometimes, uidRange: 5-3}
                colour: blue
                """)).extracting(Problem::field).containsExactlyInAnyOrder(
                "server.port", "server.hots", "store.url", "executor",
                "nodes[0].name", "nodes[1].cpu", "nodes[1].memory", "nodes[1].gpuModel", "nodes[2].name",
                "instances.gracePeriod", "instances.inheritEnv[0]", "instances.isolation", "instances.uidRange", "colour");
    }

    @Test
    void theKubernetesExecutorIsConfiguredInItsOwnBlock() {
        ServerConfig config = read("""
                executor: kubernetes
                kubernetes:
                  kubeconfig: /etc/slipstream/kubeconfig
                  context: training
                  namespace: ml-jobs
                  namespaces: {team-b: team-b-jobs}
                  nodeSelector: {slipstream.io/pool: training}
                  notReadyTimeout: 90s
                  storage: {storageClass: nfs-rwx, size: 2Ti}
                  imagePullSecrets: [registry]
                """);
        var kubernetes = config.executor(KubernetesConfig.class);
        assertThat(kubernetes.kubeconfig()).isEqualTo("/etc/slipstream/kubeconfig");
        assertThat(kubernetes.context()).isEqualTo("training");
        assertThat(kubernetes.namespace()).isEqualTo("ml-jobs");
        assertThat(kubernetes.namespaceOf("team-b")).isEqualTo("team-b-jobs");
        assertThat(kubernetes.namespaceOf("team-a")).isEqualTo("ml-jobs");
        assertThat(kubernetes.nodeSelector()).containsExactly(Map.entry("slipstream.io/pool", "training"));
        assertThat(kubernetes.notReadyTimeout()).isEqualTo(Duration.ofSeconds(90));
        assertThat(kubernetes.storageClass()).isEqualTo("nfs-rwx");
        assertThat(kubernetes.storageSize()).isEqualTo("2Ti");
        assertThat(kubernetes.imagePullSecrets()).containsExactly("registry");
        assertThat(kubernetes.gpuModelLabel()).isEqualTo("nvidia.com/gpu.product");
        assertThat(read("executor: kubernetes\n").executor(KubernetesConfig.class).namespace()).isEqualTo("slipstream-jobs");
        assertThat(read("executor: local\n").executor()).isInstanceOf(LocalExecutorSettings.class);
    }

    @Test
    void kubernetesMistakesAreNamed() {
        assertThat(problemsOf("""
                executor: kubernetes
                nodes: auto
                kubernetes:
                  namespace: Jobs_Here
                  namespaces: {team-b: "Team B"}
                  nodeSelector: {"bad key!": x, pool: "a b"}
                  notReadyTimeout: 1s
                  storage: {size: lots, storageClass: x, existingClaim: y, mode: rwx}
                  imagePullSecrets: [1]
                  colour: blue
                """)).extracting(Problem::field).containsExactlyInAnyOrder(
                "nodes", "kubernetes.namespace", "kubernetes.namespaces.team-b", "kubernetes.nodeSelector.bad key!", "kubernetes.nodeSelector.pool",
                "kubernetes.notReadyTimeout", "kubernetes.storage.size", "kubernetes.storage.existingClaim", "kubernetes.storage.mode",
                "kubernetes.imagePullSecrets[0]", "kubernetes.colour");
        assertThat(problemsOf("kubernetes: {namespace: x}\n")).extracting(Problem::field).containsExactly("kubernetes");
    }

    @Test
    void runLimitsMayBeLoweredButNeverPastTheirBounds() {
        ServerConfig config = read("runs: {maxRuntime: 7d, retention: 90d}\n");
        assertThat(config.limits().maxRuntime()).isEqualTo(java.time.Duration.ofDays(7));
        assertThat(config.limits().retention()).isEqualTo(java.time.Duration.ofDays(90));
        assertThat(problemsOf("runs: {maxRuntime: 31d, retention: 1h}\n")).extracting(Problem::field)
                .containsExactlyInAnyOrder("runs.maxRuntime", "runs.retention");
    }

    @Test
    void preemptionForFairSharingIsOnUnlessTheAdminTurnsItOff() {
        assertThat(DEFAULTS.fairSharingPreemption()).isEqualTo(FairSharingPreemption.LessThanOrEqualToFinalShare);
        assertThat(read("fairSharing: {preemption: Never}\n").fairSharingPreemption()).isEqualTo(FairSharingPreemption.Never);
        assertThat(read("fairSharing: {preemption: Never}\n").withPort(1).fairSharingPreemption()).isEqualTo(FairSharingPreemption.Never);
        assertThat(read("fairSharing: {}\n").fairSharingPreemption()).isEqualTo(FairSharingPreemption.LessThanOrEqualToFinalShare);
        List<Problem> problems = problemsOf("fairSharing: {preemption: Sometimes, weight: 2}\n");
        assertThat(problems).extracting(Problem::field).containsExactlyInAnyOrder("fairSharing.preemption", "fairSharing.weight");
        assertThat(problems).extracting(Problem::message).contains("'Sometimes' is not one of Never, LessThanOrEqualToFinalShare");
    }

    @Test
    void identityTokensAreOffUntilAnIssuerIsSetAndTheIssuerIsAnHttpUrlWithoutQueryFragmentOrUser() {
        assertThat(DEFAULTS.identityIssuer()).isNull();
        assertThat(read("identity: {issuer: https://slipstream.example.com/}\n").identityIssuer()).isEqualTo("https://slipstream.example.com");
        assertThat(read("identity: {issuer: 'https://example.com/slipstream'}\n").withPort(1).identityIssuer()).isEqualTo("https://example.com/slipstream");
        for (String bad : List.of("slipstream.example.com", "ftp://example.com", "https://example.com/?a=1", "https://example.com/#x",
                "https://user:pw@example.com", "https://exa mple.com")) {
            assertThat(problemsOf("identity: {issuer: '" + bad + "'}\n")).as(bad).extracting(Problem::field).containsExactly("identity.issuer");
        }
        assertThat(problemsOf("identity: {}\n")).extracting(Problem::field).containsExactly("identity.issuer");
        assertThat(problemsOf("identity: {issuer: https://a.example, audiences: [x]}\n")).extracting(Problem::field).containsExactly("identity.audiences");
    }

    @Test
    void theKeyFilesMayLiveElsewhere() {
        assertThat(read("server: {port: 9000}\n").keys()).isEqualTo(KeyFiles.DEFAULTS);
        assertThat(DEFAULTS.keys().secretKeyIn(Path.of("/data"))).isEqualTo(Path.of("/data/secret.key"));
        assertThat(DEFAULTS.keys().tokenPepperIn(Path.of("/data"))).isEqualTo(Path.of("/data/token.pepper"));
        ServerConfig config = read("secrets: {keyFile: /etc/slipstream/secret.key, previousKeyFile: /etc/slipstream/old.key}\n"
                + "tokens: {pepperFile: /etc/slipstream/token.pepper}\n");
        assertThat(config.keys()).isEqualTo(new KeyFiles(Path.of("/etc/slipstream/secret.key"), Path.of("/etc/slipstream/old.key"),
                Path.of("/etc/slipstream/token.pepper")));
        assertThat(config.withPort(1).keys()).isEqualTo(config.keys());
        assertThat(problemsOf("secrets: {keyFile: relative.key, previousKeyFile: relative.key, keyfile: x}\ntokens: {pepperFile: 3}\n"))
                .extracting(io.slipstream.api.problem.Problem::field)
                .containsExactlyInAnyOrder("secrets.keyFile", "secrets.previousKeyFile", "secrets.keyfile", "tokens.pepperFile");
    }

    @Test
    void duplicateNodeNamesAreRefused() {
        assertThat(problemsOf("""
                nodes:
                  - {namePrefix: n, count: 2, cpu: 1, memory: 1Gi}
                  - {name: n-2, cpu: 1, memory: 1Gi}
                """)).extracting(Problem::message).anyMatch(m -> m.contains("n-2 is declared twice"));
        assertThatThrownBy(() -> read("nodes: []\n")).isInstanceOf(InvalidInputException.class);
        assertThatThrownBy(() -> read("nodes: 3\n")).isInstanceOf(InvalidInputException.class);
    }

    @Test
    void executorsAndStoresAreFoundByName() {
        Plugins installed = Plugins.installed();
        assertThat(installed.executorNames()).isEqualTo("kubernetes, local, simulated");
        assertThat(installed.storeNames()).isEqualTo("h2, postgresql");
        assertThat(problemsOf("executor: nomad\n")).singleElement().satisfies(problem -> {
            assertThat(problem.field()).isEqualTo("executor");
            assertThat(problem.message()).isEqualTo("'nomad' is not an executor of this build (available: kubernetes, local)");
        });
        Plugins localOnly = new Plugins(List.of(new LocalExecutorFactory(MACHINE)), List.of(new JdbcStoreFactory.H2()));
        assertThatThrownBy(() -> ConfigReader.read("executor: kubernetes\n".getBytes(StandardCharsets.UTF_8), DEFAULTS, Map.of(), localOnly))
                .isInstanceOf(InvalidInputException.class)
                .satisfies(e -> assertThat(((InvalidInputException) e).problems()).extracting(Problem::message)
                        .containsExactly("'kubernetes' is not an executor of this build (available: local)"));
        Plugins kubernetesOnly = new Plugins(List.of(new KubernetesExecutorFactory()), List.of(new JdbcStoreFactory.H2()));
        assertThat(ConfigReader.read("executor: kubernetes\n".getBytes(StandardCharsets.UTF_8), DEFAULTS, Map.of(), kubernetesOnly).executor())
                .isInstanceOf(KubernetesConfig.class);
        assertThatThrownBy(() -> ConfigReader.read("server: {port: 1}\n".getBytes(StandardCharsets.UTF_8), DEFAULTS, Map.of(), kubernetesOnly))
                .isInstanceOf(InvalidInputException.class)
                .satisfies(e -> assertThat(((InvalidInputException) e).problems()).extracting(Problem::field).containsExactly("executor"));
    }

    @Test
    void theStoreIsChosenByItsUrlOrItsType() {
        assertThat(read("store: {url: \"jdbc:h2:mem:x\"}\n").store()).isEqualTo(new JdbcStoreSettings("h2", "jdbc:h2:mem:x", null, null));
        assertThat(read("store: {type: h2}\n").store()).isEqualTo(JdbcStoreSettings.embedded());
        assertThat(problemsOf("store: {url: \"jdbc:mysql://db/x\"}\n")).singleElement().satisfies(problem -> {
            assertThat(problem.field()).isEqualTo("store.url");
            assertThat(problem.message()).contains("jdbc:h2:, jdbc:postgresql:");
        });
        assertThat(problemsOf("store: {type: mysql, url: x}\n")).extracting(Problem::field).containsExactly("store.type");
        assertThat(problemsOf("store: {type: postgresql, url: \"jdbc:h2:mem:x\"}\n")).extracting(Problem::field).containsExactly("store.url");
        assertThat(problemsOf("store: {type: postgresql}\n")).extracting(Problem::field).containsExactly("store.url");
        assertThat(problemsOf("store: {username: x}\n")).extracting(Problem::field).containsExactly("store.url");
        assertThat(problemsOf("store: {url: \"jdbc:postgresql://db/x\", user: x}\n")).extracting(Problem::field).containsExactly("store.user");
    }

    @Test
    void optionsAreReadLikeTheFileSays() {
        ServerConfig config = ConfigReader.read("store: {url: \"jdbc:postgresql://old/x\", username: u, password: p}\n"
                .getBytes(StandardCharsets.UTF_8), DEFAULTS, Map.of("store.url", "jdbc:postgresql://new/x"), PLUGINS);
        assertThat(config.store()).isEqualTo(new JdbcStoreSettings("postgresql", "jdbc:postgresql://new/x", "u", "p"));
        assertThat(ConfigReader.read(null, DEFAULTS, Map.of("store.url", "jdbc:postgresql://db/x"), PLUGINS).store())
                .isEqualTo(new JdbcStoreSettings("postgresql", "jdbc:postgresql://db/x", null, null));
    }

    @Test
    void theLocalExecutorsInstanceFieldsAreIgnoredByTheKubernetesOne() {
        ServerConfig config = read("executor: kubernetes\ninstances: {gracePeriod: 7s, logLimit: 2Gi, isolation: \"on\"}\n");
        assertThat(config.executor()).isInstanceOf(KubernetesConfig.class);
        assertThat(config.limits().gracePeriod()).isEqualTo(Duration.ofSeconds(7));
        assertThat(problemsOf("executor: kubernetes\ninstances: {logLimt: 2Gi}\n")).singleElement().satisfies(problem -> {
            assertThat(problem.field()).isEqualTo("instances.logLimt");
            assertThat(problem.message()).contains("did you mean 'logLimit'");
        });
    }

    @Test
    void anExecutorMayNotClaimTheServersFields() {
        LocalExecutorFactory local = new LocalExecutorFactory(MACHINE);
        io.slipstream.executor.ExecutorFactory greedy = new io.slipstream.executor.ExecutorFactory() {
            @Override
            public String name() {
                return "greedy";
            }

            @Override
            public java.util.Set<String> configFields() {
                return java.util.Set.of("nodes", "instances.gracePeriod");
            }

            @Override
            public io.slipstream.executor.ExecutorSettings read(io.slipstream.api.spec.FieldReader config) {
                return local.read(config);
            }

            @Override
            public io.slipstream.executor.Executor create(io.slipstream.executor.ExecutorSettings settings,
                                                         io.slipstream.executor.ExecutorContext context) {
                return local.create(settings, context);
            }
        };
        assertThatThrownBy(() -> new Plugins(List.of(greedy), List.of())).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("instances.gracePeriod");
    }
}
