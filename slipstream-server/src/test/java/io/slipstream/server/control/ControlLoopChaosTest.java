package io.slipstream.server.control;

import static io.slipstream.model.testing.Runs.aRun;
import static io.slipstream.testing.JobBuilder.aJob;
import static org.assertj.core.api.Assertions.assertThat;

import io.slipstream.api.run.InstanceId;
import io.slipstream.api.run.RealTimeResources;
import io.slipstream.api.run.RunId;
import io.slipstream.api.run.RunState;
import io.slipstream.api.spec.Document;
import io.slipstream.api.spec.FaultTolerance;
import io.slipstream.api.spec.IdleMode;
import io.slipstream.api.spec.JobSpec;
import io.slipstream.api.spec.ObjectMeta;
import io.slipstream.api.spec.QuotaSpec;
import io.slipstream.api.spec.QuotaType;
import io.slipstream.api.spec.Resources;
import io.slipstream.api.spec.WorkspaceSpec;
import io.slipstream.executor.LaunchSpec;
import io.slipstream.executor.NodeInfo;
import io.slipstream.executor.testing.FakeExecutor;
import io.slipstream.model.EventType;
import io.slipstream.model.InstanceRecord;
import io.slipstream.model.RunEvent;
import io.slipstream.model.RunRecord;
import io.slipstream.model.testing.Runs;
import io.slipstream.scheduler.QuotaLedger;
import io.slipstream.store.ConflictException;
import io.slipstream.store.StoreUnavailableException;
import io.slipstream.store.memory.InMemoryStore;
import io.slipstream.testing.TestingClock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.LongStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Chaos below the process boundary: the control loop over the in-memory store (with its outage hooks), a lifelike
 * {@link FakeExecutor} and a testing clock, driven by a seeded random sequence of submissions, cycles, instance exits,
 * cancels, executor calls that fail, store outages and crashes of the loop at a random store call (the loop and its
 * executor are thrown away with everything they held in memory, a new pair adopts what runs, as after {@code kill -9}).
 * Instances ignore a stop notice: the executor kills them when their grace period is over, by timers that die with it
 * in a crash, as a server's do. After every step:
 * <ul>
 *   <li>nothing acknowledged is lost: every run whose submission returned is in the store, and a final state stays;</li>
 *   <li>nothing starts twice: no run has live instances of two attempts, no live instance belongs to a run that has
 *       ended or does not exist, no node holds more live instances than it has room for, no GPU is given twice;</li>
 *   <li>quota usage equals the admitted runs: each quota's ledger is what its runs' live instance records hold, split
 *       as the runs say (InQuota / NotInQuota), and what runs not being stopped hold InQuota within its guarantee.</li>
 * </ul>
 * Once the chaos stops, every run still active is cancelled and must end, with nothing left allocated or live.
 * A failure names its seed: {@code -Dchaos.seeds=...} runs that one again (it decides the same way every time: one
 * launch thread, reports delivered before every step). {@code -Dchaos.steps} makes each sequence longer.
 */
class ControlLoopChaosTest {
    private static final int STEPS = Integer.getInteger("chaos.steps", 1_500);
    private static final List<String> TEAMS = List.of("team-a", "team-b", "team-c");
    private static final Map<String, Integer> GUARANTEED_GPUS = Map.of("team-a", 16, "team-b", 16, "team-c", 0);

    private final TestingClock clock = new TestingClock();
    private final InMemoryStore store = new InMemoryStore();
    private final FakeExecutor.Cluster cluster = new FakeExecutor.Cluster(6, 8);
    private FakeExecutor executor;
    private ControlLoop loop;
    private Random random;
    private long seed;
    private final List<RunId> acknowledged = new ArrayList<>();
    private final Map<RunId, RunState> finalStates = new HashMap<>();
    private final List<String> story = new ArrayList<>();
    private int crashes;
    private int outages;

    static LongStream seeds() {
        String given = System.getProperty("chaos.seeds");
        return given != null ? java.util.Arrays.stream(given.split(",")).mapToLong(Long::parseLong) : LongStream.of(1, 2, 3, 4);
    }

    @AfterEach
    void tearDown() {
        if (loop != null) {
            loop.close();
        }
        executor.close();
        store.close();
    }

    @ParameterizedTest(name = "seed {0}")
    @MethodSource("seeds")
    void crashesAndOutagesAtRandomPointsLoseNothingAndStartNothingTwice(long seed) {
        this.seed = seed;
        random = new Random(seed);
        for (String team : TEAMS) {
            store.write(tx -> tx.createDocument(new Document<>(ObjectMeta.of(team, null), new WorkspaceSpec(List.of())), clock.instant()));
            int gpus = GUARANTEED_GPUS.get(team);
            // Dedicated quotas of one GPU model share their idle capacity: team-c only ever borrows.
            store.write(tx -> tx.createDocument(new Document<>(ObjectMeta.of("gpu", team), new QuotaSpec(QuotaType.Dedicated,
                    new Resources(gpus * 4_000L, gpus * (32L << 30), gpus, "sim-gpu"), null, null)), clock.instant()));
        }
        start();
        for (int step = 0; step < STEPS; step++) {
            executor.killDue();
            executor.awaitReports();
            int roll = random.nextInt(100);
            if (roll < 20) {
                submit(step);
            } else if (roll < 50) {
                cycle();
            } else if (roll < 68) {
                exitOne();
            } else if (roll < 72) {
                cancelOne();
            } else if (roll < 82) {
                clock.advance(Duration.ofSeconds(1 + random.nextInt(40)));
            } else if (roll < 85) {
                executorFault();
            } else if (roll < 92) {
                outage();
            } else {
                crash();
            }
            check("step " + step);
        }
        settle();
        System.out.printf("figure: chaos seed %d: %d runs, %d crashes, %d outages, %d steps%n", seed, acknowledged.size(), crashes, outages, STEPS);
    }

    // --- the world ---

    private void start() {
        executor = new FakeExecutor(cluster, clock, FakeExecutor.Mode.LIFELIKE).ignoringNotices();
        loop = new ControlLoop(LoopParts.of(store, executor, clock).withParallelLaunches(1));
        if (random.nextInt(3) == 0) {
            executor.failNextTerminates(1 + random.nextInt(2)); // the stops sent again at the start may fail
        }
        // The runner retries recovery until it is done: so does the test, through outages at random calls.
        while (true) {
            boolean outage = random.nextInt(4) == 0;
            if (outage) {
                store.simulateOutageAfter(random.nextInt(6));
            }
            try {
                loop.recover();
                store.simulateOutage(false);
                return;
            } catch (StoreUnavailableException e) {
                store.simulateOutage(false);
                story.add("recovery met an outage");
            } catch (RuntimeException e) {
                store.simulateOutage(false);
                story.add("recovery failed: " + e.getMessage());
            }
        }
    }

    private void submit(int step) {
        String team = TEAMS.get(random.nextInt(TEAMS.size()));
        int gpus = List.of(1, 2, 4, 8).get(random.nextInt(4));
        int replicas = 1 + random.nextInt(gpus == 8 ? 2 : 3);
        IdleMode idle = team.equals("team-c") ? IdleMode.OnlyIdle : IdleMode.values()[random.nextInt(IdleMode.values().length)];
        JobSpec spec = aJob("job").workspace(team).quota("gpu").idle(idle).priority(random.nextInt(3)).replicas(replicas)
                .gpus(gpus).cpu(gpus * 4).memoryGi(gpus * 32L).preemptionGrace(Duration.ofSeconds(random.nextInt(20)))
                .faultTolerance(FaultTolerance.of(FaultTolerance.RunType.Sync, 2, null, null, null,
                        new FaultTolerance.Backoff(Duration.ofSeconds(1), Duration.ofSeconds(4)),
                        new FaultTolerance.RetryOn(List.of(new FaultTolerance.ExitCodeRange(1, 1)), null, null), null, null, null, null))
                .spec();
        // Ids in submission order: the scheduler breaks ties by id, and a seed must decide the same way every time.
        RunRecord run = aRun("job").id(new RunId(String.format("job-%05d", step))).workspace(team).spec(spec).createdAt(clock.instant()).build();
        store.write(tx -> tx.createRun(run, Runs.created(run)));
        acknowledged.add(run.id());
        story.add("submitted " + run.id() + " (" + team + ", " + replicas + "x" + gpus + " GPUs, " + idle + ")");
    }

    /** A cycle as the runner runs it: one that fails (the executor unreachable) is logged and tried again later. */
    private void cycle() {
        try {
            loop.cycle();
            story.add("cycle");
        } catch (StoreUnavailableException e) {
            throw e; // only the test's outages make the store unreachable, and they are over when a plain cycle runs
        } catch (RuntimeException e) {
            story.add("cycle failed: " + e.getMessage());
        }
    }

    /** The executor cannot be reached for its next launches or stops. */
    private void executorFault() {
        int count = 1 + random.nextInt(2);
        if (random.nextBoolean()) {
            executor.failNextLaunches(count);
            story.add("the next " + count + " launches fail");
        } else {
            executor.failNextTerminates(count);
            story.add("the next " + count + " stops fail");
        }
    }

    private void exitOne() {
        List<InstanceId> live = live().keySet().stream().sorted(java.util.Comparator.comparing(InstanceId::toString)).toList();
        if (live.isEmpty()) {
            return;
        }
        InstanceId id = live.get(random.nextInt(live.size()));
        int code = random.nextInt(5) == 0 ? 1 : 0;
        executor.exit(id, code);
        story.add(id + " exited " + code);
    }

    /** Cancels an active run: half the time one that is starting, whose launches a crash may have cut short. */
    private void cancelOne() {
        List<RunRecord> active = store.runs().active();
        List<RunRecord> starting = active.stream().filter(run -> run.state() == RunState.STARTING).toList();
        if (!starting.isEmpty() && random.nextBoolean()) {
            active = starting;
        }
        if (active.isEmpty()) {
            return;
        }
        RunRecord run = active.get(random.nextInt(active.size()));
        if (run.cancelRequestedAt() != null) {
            return;
        }
        try {
            store.write(tx -> {
                RunRecord updated = tx.updateRun(run.withCancelRequestedAt(clock.instant()));
                tx.appendEvent(RunEvent.of(run.id(), clock.instant(), EventType.CancelRequested, updated.state().name(), "CancelRequested", "by chaos", null));
                return updated;
            });
            story.add("cancel " + run.id());
        } catch (ConflictException e) {
            story.add("cancel " + run.id() + " conflicted");
        }
    }

    /** The store goes away after a random number of calls of the next cycle, and comes back; the loop carries on. */
    private void outage() {
        int calls = random.nextInt(80);
        store.simulateOutageAfter(calls);
        try {
            loop.cycle();
            story.add("outage after " + calls + " calls: the cycle ended before it");
        } catch (StoreUnavailableException e) {
            outages++;
            story.add("outage after " + calls + " calls");
        } catch (RuntimeException e) {
            story.add("outage after " + calls + " calls: the cycle failed before it: " + e.getMessage());
        } finally {
            store.simulateOutage(false);
        }
    }

    /**
     * The control plane dies at a random store call of a cycle (or right after it): what its loop and executor held in
     * memory is gone, reports not yet delivered are lost, and a new loop adopts what runs.
     */
    private void crash() {
        int calls = random.nextInt(80);
        store.simulateOutageAfter(calls);
        try {
            loop.cycle();
        } catch (RuntimeException e) {
            // the process is killed here (a store call that fails, or the executor's failure ended the cycle first)
        } finally {
            store.simulateOutage(false);
        }
        loop.close();
        executor.close();
        crashes++;
        story.add("crash after " + calls + " calls");
        start();
    }

    /**
     * No more chaos: every run still active is cancelled, and must end with nothing left running, however its stops
     * were cut short (a cancel is guaranteed: the loop alone, without any instance exiting by itself, gets it done).
     */
    private void settle() {
        executor.awaitReports();
        for (RunRecord run : store.runs().active()) {
            if (run.cancelRequestedAt() == null) {
                store.write(tx -> tx.updateRun(run.withCancelRequestedAt(clock.instant())));
            }
        }
        for (int round = 0; round < 200; round++) {
            executor.killDue();
            executor.awaitReports();
            if (acknowledged.stream().allMatch(id -> store.runs().get(id).orElseThrow().state().isFinal())) {
                break;
            }
            cycle();
            clock.advance(Duration.ofSeconds(5));
            check("settling, round " + round);
        }
        executor.awaitReports();
        check("settled");
        for (RunId id : acknowledged) {
            RunRecord run = store.runs().get(id).orElseThrow();
            assertThat(run.state().isFinal()).as(context("settled: " + id + " has ended, but is " + run.state() + " (" + run.reason() + ")\n  " + storyOf(id)))
                    .isTrue();
        }
        assertThat(live()).as(context("settled: nothing runs")).isEmpty();
        QuotaLedger ledger = QuotaLedger.of(LiveSnapshot.read(store, executor.nodes()).snapshot());
        for (QuotaLedger.QuotaLine line : ledger.quotas()) {
            assertThat(line.used().gpu() + line.used().milliCpu()).as(context("settled: quota " + line.quota() + " uses nothing: " + line)).isZero();
        }
    }

    // --- the invariants ---

    private void check(String when) {
        Map<RunId, RunRecord> runs = new LinkedHashMap<>();
        store.runs().list(new io.slipstream.store.RunQuery(null, null, null, null, 100_000, null)).forEach(run -> runs.put(run.id(), run));
        for (RunId id : acknowledged) {
            assertThat(runs).as(context(when + ": acknowledged run " + id + " is in the store")).containsKey(id);
        }
        runs.forEach((id, run) -> {
            RunState before = finalStates.get(id);
            if (before != null) {
                assertThat(run.state()).as(context(when + ": " + id + " was " + before + " and stays so")).isEqualTo(before);
            } else if (run.state().isFinal()) {
                finalStates.put(id, run.state());
            }
        });
        Map<InstanceId, LaunchSpec> live = live();
        Map<RunId, Set<Integer>> attempts = new TreeMap<>();
        live.keySet().forEach(id -> attempts.computeIfAbsent(id.runId(), r -> new HashSet<>()).add(id.attempt()));
        attempts.forEach((id, liveAttempts) -> {
            assertThat(liveAttempts).as(context(when + ": attempts of " + id + " with live instances")).hasSize(1);
            assertThat(runs).as(context(when + ": a live instance belongs to " + id + ", which does not exist")).containsKey(id);
            assertThat(runs.get(id).state().isFinal()).as(context(when + ": " + id + " is " + runs.get(id).state() + " with live instances")).isFalse();
        });
        checkNodes(when, live);
        checkQuotas(when, runs);
    }

    /** What the executor runs (not what the store says) fits every node, and no GPU is given twice. */
    private void checkNodes(String when, Map<InstanceId, LaunchSpec> live) {
        for (NodeInfo node : executor.nodes()) {
            List<LaunchSpec> on = live.values().stream().filter(spec -> spec.node().equals(node.name())).toList();
            long cpu = on.stream().mapToLong(spec -> spec.resources().milliCpu()).sum();
            long memory = on.stream().mapToLong(spec -> spec.resources().memoryBytes()).sum();
            List<Integer> gpus = on.stream().flatMap(spec -> spec.gpus().stream()).toList();
            assertThat(cpu).as(context(when + ": cpu of live instances on " + node.name())).isLessThanOrEqualTo(node.capacity().milliCpu());
            assertThat(memory).as(context(when + ": memory of live instances on " + node.name())).isLessThanOrEqualTo(node.capacity().memoryBytes());
            assertThat(gpus).as(context(when + ": GPUs of live instances on " + node.name())).doesNotHaveDuplicates()
                    .hasSizeLessThanOrEqualTo(node.capacity().gpu());
        }
    }

    /**
     * Each quota's ledger is what its admitted runs' instances hold, and what its runs not being stopped hold InQuota
     * is within its guarantee.
     */
    private void checkQuotas(String when, Map<RunId, RunRecord> runs) {
        QuotaLedger ledger = QuotaLedger.of(LiveSnapshot.read(store, executor.nodes()).snapshot());
        // team -> {GPUs InQuota, GPUs NotInQuota, GPUs InQuota of runs not being stopped}
        Map<String, long[]> held = new HashMap<>();
        for (InstanceRecord instance : store.runs().instancesOfActiveRuns()) {
            RunRecord run = runs.get(instance.id().runId());
            if (run.state().holdsResources() && !instance.state().isFinal()) {
                int gpus = run.spec().nodeGroups().get(0).resources().gpu();
                long[] sums = held.computeIfAbsent(run.workspace(), t -> new long[3]);
                boolean inQuota = run.realTimeResources() == RealTimeResources.InQuota;
                sums[inQuota ? 0 : 1] += gpus;
                if (inQuota && run.state() != RunState.TERMINATING) {
                    sums[2] += gpus;
                }
            }
        }
        for (QuotaLedger.QuotaLine line : ledger.quotas()) {
            long[] expected = held.getOrDefault(line.quota().workspace(), new long[3]);
            String figures = when + ": quota " + line.quota() + " " + line + " while its runs hold " + expected[0] + " GPUs InQuota and "
                    + expected[1] + " NotInQuota";
            assertThat(line.inQuota().gpu()).as(context(figures)).isEqualTo(expected[0]);
            assertThat(line.borrowed().gpu()).as(context(figures)).isEqualTo(expected[1]);
            assertThat(line.used().gpu()).as(context(figures)).isEqualTo(expected[0] + expected[1]);
            // A run being stopped holds its nodes until its processes are gone, but its quota no longer counts it.
            assertThat(expected[2]).as(context("beyond its guarantee: " + figures)).isLessThanOrEqualTo(line.ownGuarantee().gpu());
        }
    }

    /** The instances the executor runs now (launched, not ended), by id. */
    private Map<InstanceId, LaunchSpec> live() {
        return executor.live();
    }

    /** What the store and the executor hold of a run, and every step that named it. */
    private String storyOf(RunId id) {
        StringBuilder text = new StringBuilder("its instances:");
        for (InstanceRecord instance : store.runs().instancesOf(id)) {
            text.append("\n    ").append(instance.id()).append(' ').append(instance.state()).append(" stop requested ").append(instance.stopRequestedAt())
                    .append(", live in the executor: ").append(executor.live().containsKey(instance.id()));
        }
        text.append("\n  its events:");
        store.runs().events(id, 0, 1_000).forEach(event -> text.append("\n    ").append(event.time()).append(' ').append(event.type()).append(' ').append(event.reason()).append(": ").append(event.message()));
        text.append("\n  the steps that named it:");
        for (int i = 0; i < story.size(); i++) {
            if (story.get(i).contains(id.value())) {
                text.append("\n    ").append(i).append(": ").append(story.get(i));
            }
        }
        return text.toString();
    }

    /** The seed and the last steps, to tell what led there (rerun with -Dchaos.seeds=). */
    private String context(String what) {
        List<String> last = story.subList(Math.max(0, story.size() - 25), story.size());
        return what + "\n  seed " + seed + " (rerun: -Dchaos.seeds=" + seed + "), " + crashes + " crashes, " + outages + " outages; the last steps:\n    "
                + String.join("\n    ", last);
    }
}
