package io.slipstream.server.control;

import static io.slipstream.model.testing.Runs.aRun;
import static io.slipstream.testing.JobBuilder.aJob;
import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.Watch;
import io.slipstream.api.codec.Json;
import io.slipstream.api.run.InstanceState;
import io.slipstream.api.run.RunId;
import io.slipstream.api.run.RunState;
import io.slipstream.api.spec.Document;
import io.slipstream.api.spec.IdleMode;
import io.slipstream.api.spec.JobSpec;
import io.slipstream.api.spec.ObjectMeta;
import io.slipstream.api.spec.QuotaSpec;
import io.slipstream.api.spec.QuotaType;
import io.slipstream.api.spec.Resources;
import io.slipstream.api.spec.WorkspaceSpec;
import io.slipstream.executor.Executor;
import io.slipstream.executor.InstanceReport;
import io.slipstream.executor.kubernetes.TestCluster;
import io.slipstream.model.ElasticWorld;
import io.slipstream.model.EventType;
import io.slipstream.model.InstanceRecord;
import io.slipstream.model.RunEvent;
import io.slipstream.model.RunRecord;
import io.slipstream.model.testing.Runs;
import io.slipstream.store.Store;
import io.slipstream.store.memory.InMemoryStore;
import io.slipstream.testing.JobBuilder;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;

/**
 * The elastic story of docs/elastic.md (as {@link ElasticRunTest} tells it over a steered executor) on Kubernetes: the
 * control loop, one cycle at a time, over the Kubernetes executor on the mock API server with the test kubelet and
 * four nodes of 8 GPUs, all guaranteed to team A. Team B's run (1 to 4 instances of a whole node, on idle capacity)
 * grows onto the 4 nodes; team A's guaranteed run of 2 reclaims 2 of them: B's removed pods are deleted, its survivors'
 * pods are made again on their nodes in a world of 2, and A's pods are made once the removed ones are gone; A finishes:
 * B grows back to 4, in its first attempt throughout. What is checked is what a user of the cluster sees: the pods,
 * their nodes, names, environment, notices and logs, the run's Service, and the attempt's metadata ConfigMap.
 *
 * <p>The loop is stepped, as in {@link ElasticRunTest}, so that the owner's two ends reach it in one cycle: the
 * server's own loop cycles on every report, and would grow B by one node and then by the other (a grow joining the
 * one in flight: world 4, as docs/elastic.md says), which is right but not this story.
 */
class KubernetesElasticRunTest {
    private static final List<String> NODES = List.of("gpu-node-1", "gpu-node-2", "gpu-node-3", "gpu-node-4");
    private static final String MODEL = "nvidia-h100-80gb-hbm3";
    private static final String IMAGE = "registry.example.com/team-b/trainer:1.0";
    /** Says which world it started in, then runs until told to stop (SIGTERM ends it). */
    private static final String TRAINER = "echo \"start world=$SLIPSTREAM_WORLD_VERSION size=$WORLD_SIZE rank=$RANK"
            + " master=$MASTER_ADDR:$MASTER_PORT host=$HOSTNAME\"; exec sleep 600";

    @TempDir
    Path root;

    private final Clock clock = Clock.systemUTC(); // the kubelet's grace periods are real
    private final List<InstanceReport> reports = new CopyOnWriteArrayList<>();
    private final PodHistory history = new PodHistory();
    private KubernetesCluster kubernetes;
    private Watch watch;
    private Store store;
    private Executor executor;
    private ControlLoop loop;

    @BeforeEach
    void start() throws Exception {
        kubernetes = new KubernetesCluster(root, NODES);
        watch = kubernetes.cluster.admin.pods().inNamespace(TestCluster.NAMESPACE).watch(history);
        store = new InMemoryStore();
        executor = reporting(kubernetes.connect(Files.createDirectories(root.resolve("data")), clock), reports);
        loop = new ControlLoop(LoopParts.of(store, executor, clock));
        quota("team-a", "gpu", 32);
        quota("team-b", "idle", 0);
    }

    @AfterEach
    void stop() throws Exception {
        loop.close();
        executor.close();
        store.close();
        watch.close();
        kubernetes.close();
    }

    @Test
    void anElasticRunShrinksAndGrowsBackAsPodsMadeAgainOnTheirNodes() throws Exception {
        RunId b = submit(borrower("train").replicas(4).minReplicas(1).build());
        shrinkToAndGrowBack(b, List.of(0, 1));
    }

    /**
     * Two elastic groups of 2 (slots a-0, a-1, b-0, b-1): the reclaim takes each group's extra (the run's highest slots
     * first), so b-0 is slot 2 and rank 1 in the world of 2, rank 2 again in the world of 4. Its pod is found by its
     * instance, not by its rank: the metadata gets its address and the world starts.
     */
    @Test
    void aShrinkThatLeavesAGapRanksTheSurvivorsDenselyOnTheirOwnPods() throws Exception {
        RunId b = submit(borrower("a").replicas(2).minReplicas(1).andGroup("b").minReplicas(1).build());
        shrinkToAndGrowBack(b, List.of(0, 2));
    }

    /** Team B's run, on idle capacity, of whole nodes; each instance says which world it started in and runs until told to stop. */
    private static JobBuilder borrower(String group) {
        return aJob("train").workspace("team-b").group(group).gpus(8).cpu(8).memoryGi(32).quota("idle").idle(IdleMode.OnlyIdle).preemptionGrace(Duration.ofSeconds(10))
                .image(IMAGE).command("sh", "-c", TRAINER);
    }

    /**
     * The story, for a borrower of 4 slots that team A's run of 2 shrinks to {@code survivors}: it starts whole, shrinks
     * for the owner, and grows back once the owner has finished, in its first attempt throughout.
     */
    private void shrinkToAndGrowBack(RunId b, List<Integer> survivors) throws Exception {
        List<Integer> removed = java.util.stream.IntStream.range(0, 4).boxed().filter(slot -> !survivors.contains(slot)).toList();
        cycleUntil("world 1 of 4 started", () -> started(b, 1, 4));
        Map<Integer, String> nodes = nodesOf(b);
        assertThat(nodes.values()).as("one instance per node, on idle capacity").containsExactlyInAnyOrderElementsOf(NODES);
        assertWorld(b, 1, Map.of(0, 0, 1, 0, 2, 0, 3, 0), nodes);

        // The owner waits for a file of this test's: the test kubelet runs containers as local processes.
        Path ownerDone = root.resolve("owner-done");
        RunId a = submit(aJob("owner").workspace("team-a").replicas(2).gpus(8).cpu(8).memoryGi(32).quota("gpu").image(IMAGE)
                .command("sh", "-c", "until [ -e '" + ownerDone + "' ]; do sleep 0.1; done").build());
        loop.cycle();
        assertThat(run(b).world().members()).as("shrunk by its extras, highest slots first").containsExactlyElementsOf(survivors);
        assertThat(run(a).state()).as("waits for the capacity its reclaim frees").isEqualTo(RunState.QUEUED);
        cycleUntil("world 2 of 2 started, and the owner running", () -> run(a).state() == RunState.RUNNING && started(b, 2, 2));
        assertInItsFirstAttempt(b);
        assertWorld(b, 2, Map.of(survivors.get(0), 1, survivors.get(1), 1), nodes);
        for (int slot : removed) {
            assertThat(history.notice(pod(b, slot, 0))).as("a removed instance is told why").startsWith("Shrunk: ");
        }
        for (int slot : survivors) {
            assertThat(history.notice(pod(b, slot, 0))).as("a survivor is told to save and start again")
                    .startsWith("WorldChange: the run goes on with 2 instance(s) in world 2");
        }
        List<Pod> owner = kubernetes.pods(a.value());
        assertThat(owner).extracting(pod -> pod.getSpec().getNodeName()).as("on the nodes the shrink freed")
                .containsExactlyInAnyOrder(nodes.get(removed.get(0)), nodes.get(removed.get(1)));
        for (Pod pod : owner) {
            assertThat(history.indexOf("ADDED", pod.getMetadata().getName())).as("%s made once the removed pods were gone", pod.getMetadata().getName())
                    .isGreaterThan(history.indexOf("DELETED", pod(b, removed.get(0), 0))).isGreaterThan(history.indexOf("DELETED", pod(b, removed.get(1), 0)));
        }

        Files.createFile(ownerDone);
        // Both of the owner's ends reach the loop before its next cycle: the owner finishes in one step, as in ElasticRunTest.
        Awaitility.await("the owner's ends").atMost(Duration.ofSeconds(60)).until(() -> reports.stream()
                .filter(r -> r instanceof InstanceReport.Exited && r.id().runId().equals(a)).count() == 2);
        cycleUntil("world 3 of 4 started", () -> started(b, 3, 4));
        assertThat(run(a).state()).isEqualTo(RunState.SUCCEEDED);
        assertInItsFirstAttempt(b);
        Map<Integer, String> grown = nodesOf(b);
        for (int slot : survivors) {
            assertThat(grown.get(slot)).as("survivor %s stays where it was", slot).isEqualTo(nodes.get(slot));
        }
        assertThat(grown.values()).as("again one instance per node").containsExactlyInAnyOrderElementsOf(NODES);
        assertWorld(b, 3, Map.of(survivors.get(0), 2, survivors.get(1), 2, removed.get(0), 1, removed.get(1), 1), grown);
        for (int slot : survivors) {
            assertThat(history.notice(pod(b, slot, 1))).startsWith("WorldChange: the run goes on with 4 instance(s) in world 3");
        }
        assertThat(store.runs().events(b, 0, 100)).filteredOn(e -> e.type() == EventType.WorldChanged).extracting(RunEvent::reason)
                .containsExactly("Shrunk", "WorldStarted", "Grown", "WorldStarted");
    }

    /**
     * The run's pods are exactly its world's, one per member slot, each of the launch {@code restarts} says (its name
     * ends in {@code -r<n>}), on the node given, under the member's stable DNS name, with the world's size, its dense
     * rank and rank 0's DNS name as the master; the metadata lists the members at their new pods' addresses; each pod's
     * log says what the workload saw.
     */
    private void assertWorld(RunId run, int version, Map<Integer, Integer> restarts, Map<Integer, String> nodes) {
        Map<Integer, String> names = new HashMap<>();
        store.runs().instancesOf(run).forEach(i -> names.put(i.id().rank(), i.displayName()));
        String service = "ss-" + run.value();
        String master = names.get(0) + "." + service + "." + TestCluster.NAMESPACE + ".svc.cluster.local";
        List<Integer> members = List.copyOf(new java.util.TreeSet<>(restarts.keySet())); // a member's rank: its place among them
        String size = Integer.toString(members.size());
        List<Pod> pods = kubernetes.pods(run.value());
        assertThat(pods).extracting(pod -> pod.getMetadata().getName()).as("the ended and removed pods are gone")
                .containsExactlyInAnyOrderElementsOf(members.stream().map(slot -> pod(run, slot, restarts.get(slot))).toList());
        var selector = kubernetes.cluster.admin.services().inNamespace(TestCluster.NAMESPACE).withName(service).get().getSpec().getSelector();
        Map<String, String> ips = new HashMap<>();
        for (Pod pod : pods) {
            int slot = slot(pod);
            String name = pod.getMetadata().getName();
            String rank = Integer.toString(members.indexOf(slot));
            assertThat(pod.getSpec().getNodeName()).as("%s on its node", name).isEqualTo(nodes.get(slot));
            assertThat(pod.getSpec().getHostname() + "." + pod.getSpec().getSubdomain()).as(name).isEqualTo(names.get(slot) + "." + service);
            // The DNS name is the headless Service's: it resolves to the pods its selector picks, the new ones among them.
            assertThat(pod.getMetadata().getLabels()).as(name).containsAllEntriesOf(selector)
                    .containsEntry("slipstream.io/node-group", names.get(slot).substring(0, names.get(slot).lastIndexOf('-')));
            assertThat(env(pod)).as(name).containsEntry("WORLD_SIZE", size).containsEntry("RANK", rank)
                    .containsEntry("SLIPSTREAM_WORLD_VERSION", Integer.toString(version))
                    .containsEntry("SLIPSTREAM_RESTART_COUNT", Integer.toString(restarts.get(slot)))
                    .containsEntry("MASTER_ADDR", master).containsEntry("MASTER_PORT", "29500");
            assertThat(log(name)).as("what %s saw", name).contains("start world=" + version + " size=" + size + " rank=" + rank
                    + " master=" + master + ":29500 host=" + names.get(slot));
            ips.put(names.get(slot), pod.getStatus().getPodIP());
        }
        var config = kubernetes.cluster.admin.configMaps().inNamespace(TestCluster.NAMESPACE).withName(service + "-1-metadata").get();
        assertThat(config.getData()).as("every member's address is in it").containsKey("complete");
        JsonNode metadata = Json.mapper().readTree(config.getData().get("metadata.json"));
        assertThat(metadata.get("worldSize").asInt()).isEqualTo(members.size());
        assertThat(metadata.at("/master/addr").asString()).isEqualTo(master);
        Map<String, String> listed = new HashMap<>();
        metadata.get("instances").forEach(instance -> {
            String name = instance.get("name").asString();
            listed.put(name, instance.get("rank").asInt() + "@" + instance.get("ip").asString());
        });
        Map<String, String> expected = new HashMap<>();
        members.forEach(slot -> expected.put(names.get(slot), members.indexOf(slot) + "@" + ips.get(names.get(slot))));
        assertThat(listed).as("the members, by rank, at their new pods' addresses").isEqualTo(expected);
    }

    private void assertInItsFirstAttempt(RunId id) {
        RunRecord run = run(id);
        assertThat(run.state()).isEqualTo(RunState.RUNNING);
        assertThat(run.attempt()).isEqualTo(1);
        assertThat(run.faults().failures()).as("no failure").isZero();
        assertThat(run.preemptions()).as("never preempted: it never left").isZero();
    }

    /** Whether the run's world {@code version} of {@code size} has started: every member's new pod runs and said so. */
    private boolean started(RunId id, int version, int size) {
        ElasticWorld world = run(id).world();
        if (world.version() != version || world.changing() || world.members().size() != size) {
            return false;
        }
        List<InstanceRecord> members = store.runs().instancesOf(id).stream().filter(i -> world.isMember(i.id().rank())).toList();
        return members.stream().allMatch(i -> i.state() == InstanceState.RUNNING
                && log(pod(id, i.id().rank(), i.restarts())).contains("start world=" + version + " "));
    }

    /** Runs cycles until the condition holds, with a deadline. */
    private void cycleUntil(String what, BooleanSupplier done) {
        Awaitility.await(what).atMost(Duration.ofSeconds(60)).pollInSameThread().pollInterval(Duration.ofMillis(50)).until(() -> {
            loop.cycle();
            return done.getAsBoolean();
        });
    }

    private Map<Integer, String> nodesOf(RunId run) {
        Map<Integer, String> nodes = new TreeMap<>();
        kubernetes.pods(run.value()).forEach(pod -> nodes.put(slot(pod), pod.getSpec().getNodeName()));
        return nodes;
    }

    /** The pod's log, as {@code kubectl logs} shows it; empty while it has none. */
    private String log(String pod) {
        try {
            String log = kubernetes.cluster.admin.pods().inNamespace(TestCluster.NAMESPACE).withName(pod).getLog();
            return log == null ? "" : log;
        } catch (io.fabric8.kubernetes.client.KubernetesClientException e) {
            return ""; // not running yet
        }
    }

    /** The pod of an instance's launch {@code restart} in attempt 1. */
    private static String pod(RunId run, int slot, int restart) {
        return "ss-" + run.value() + "-1-" + slot + (restart == 0 ? "" : "-r" + restart);
    }

    private static int slot(Pod pod) {
        return Integer.parseInt(pod.getMetadata().getLabels().get("slipstream.io/rank"));
    }

    private static Map<String, String> env(Pod pod) {
        Map<String, String> env = new HashMap<>();
        for (EnvVar var : pod.getSpec().getContainers().get(0).getEnv()) {
            if (var.getValue() != null) {
                env.put(var.getName(), var.getValue());
            }
        }
        return env;
    }

    private void quota(String workspace, String name, int gpus) {
        if (store.documents().get(io.slipstream.api.spec.Kind.Workspace, null, workspace).isEmpty()) {
            store.write(tx -> tx.createDocument(new Document<>(ObjectMeta.of(workspace, null), new WorkspaceSpec(List.of())), clock.instant()));
        }
        Resources min = new Resources(gpus * 1000L, gpus * (4L << 30), gpus, MODEL);
        store.write(tx -> tx.createDocument(new Document<>(ObjectMeta.of(name, workspace), new QuotaSpec(QuotaType.Dedicated, min, null, null)),
                clock.instant()));
    }

    private RunId submit(Document<JobSpec> job) {
        RunRecord run = aRun(job.metadata().name()).workspace(job.metadata().workspace()).spec(job.spec()).createdAt(clock.instant()).build();
        return store.write(tx -> tx.createRun(run, Runs.created(run))).id();
    }

    private RunRecord run(RunId id) {
        return store.runs().get(id).orElseThrow();
    }

    /** The executor, with every report it makes also kept in {@code reports} on its way to the control loop. */
    @SuppressWarnings("unchecked")
    private static Executor reporting(Executor executor, List<InstanceReport> reports) {
        return (Executor) Proxy.newProxyInstance(Executor.class.getClassLoader(), new Class<?>[] {Executor.class}, (proxy, method, args) -> {
            Object[] passed = args;
            if (method.getName().equals("setListener")) {
                Consumer<InstanceReport> listener = (Consumer<InstanceReport>) args[0];
                passed = new Object[] {(Consumer<InstanceReport>) report -> {
                    reports.add(report);
                    listener.accept(report);
                }};
            }
            try {
                return method.invoke(executor, passed);
            } catch (InvocationTargetException e) {
                throw e.getCause();
            }
        });
    }
}
