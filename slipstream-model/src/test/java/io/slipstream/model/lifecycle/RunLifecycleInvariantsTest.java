package io.slipstream.model.lifecycle;

import static io.slipstream.testing.JobBuilder.aJob;
import static org.assertj.core.api.Assertions.assertThat;

import io.slipstream.api.run.InstanceId;
import io.slipstream.api.run.InstanceState;
import io.slipstream.api.run.RealTimeResources;
import io.slipstream.api.run.RunId;
import io.slipstream.api.run.RunState;
import io.slipstream.api.spec.FaultTolerance;
import io.slipstream.api.spec.JobSpec;
import io.slipstream.api.spec.NodeGroupSpec;
import io.slipstream.model.FaultState;
import io.slipstream.model.InstanceRecord;
import io.slipstream.model.RunRecord;
import io.slipstream.testing.JobBuilder;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Random lives of random runs, seeded: instances exit as they like, nodes go down, runs are preempted, cancelled,
 * time passes. After each event the lifecycle is stepped until it stays, the way the control loop does, and what
 * must always hold is checked: it settles, every move is one the state machine allows, a stop is sent once, only
 * placed instances are launched, no restart budget is overrun, a run ends only once its instances are gone, and a
 * cancelled run always ends.
 */
class RunLifecycleInvariantsTest {
    private static final int SEEDS = 400;
    private static final int EVENTS = 80;
    private static final RunLifecycle LIFECYCLE = new RunLifecycle(new LifecycleLimits(Duration.ofSeconds(30), Duration.ofDays(30)));

    /** Restarts in place over all lives: the Async lives must have had some, or they checked nothing of them. */
    private static int restartsInPlace;

    @Test
    void everyRandomLifeKeepsTheInvariants() {
        restartsInPlace = 0;
        for (long seed = 1; seed <= SEEDS; seed++) {
            new Life(seed).live();
        }
        assertThat(restartsInPlace).as("instances restarted in place (runType Async)").isPositive();
    }

    private static final class Life {
        private final long seed;
        private final Random random;
        private final JobSpec spec;
        private RunRecord run;
        private List<InstanceRecord> instances = new ArrayList<>();
        private Instant now = Instant.parse("2026-05-01T00:00:00Z");
        private final Map<String, String> downNodes = new HashMap<>();
        private final Map<String, String> drainingNodes = new HashMap<>();
        private final Set<InstanceId> stopsSent = new HashSet<>();
        private long workLost;
        private int steps;

        Life(long seed) {
            this.seed = seed;
            this.random = new Random(seed);
            this.spec = job(random);
            this.run = RunRecord.queued(new RunId("job-r" + seed), "team-a", "job", 1, spec, now);
        }

        void live() {
            for (int event = 0; event < EVENTS && !run.state().isFinal(); event++) {
                if (run.state() == RunState.QUEUED && run.cancelRequestedAt() == null) {
                    admit();
                } else {
                    perturb();
                }
                settle();
            }
            // Whatever happened, a cancel ends the run once its instances are gone.
            if (!run.state().isFinal()) {
                run = run.withCancelRequestedAt(now);
                for (int round = 0; round < 10 && !run.state().isFinal(); round++) {
                    settle();
                    instances.stream().filter(i -> i.stopRequestedAt() != null && !i.state().isFinal()).toList().forEach(this::stopped);
                    now = now.plusSeconds(1);
                    settle();
                }
                assertThat(run.state()).as(what("a cancelled run ends")).isIn(RunState.CANCELLED, RunState.SUCCEEDED, RunState.FAILED,
                        RunState.TIMED_OUT);
            }
        }

        /** The scheduler's part: a queued run is admitted once its backoff is over. */
        private void admit() {
            if (run.faults().retryAt() != null && now.isBefore(run.faults().retryAt())) {
                now = run.faults().retryAt();
            }
            run = run.admitted(RealTimeResources.InQuota, "Admitted", now);
            instances = new ArrayList<>();
            int rank = 0;
            for (NodeGroupSpec group : spec.nodeGroups()) {
                for (int i = 0; i < group.replicas(); i++, rank++) {
                    instances.add(InstanceRecord.pending(new InstanceId(run.id(), run.attempt(), rank), group.name(), i, "node-" + (rank % 3), List.of()));
                }
            }
        }

        private void perturb() {
            int pick = random.nextInt(100);
            List<InstanceRecord> live = instances.stream().filter(i -> i.state() == InstanceState.RUNNING).toList();
            List<InstanceRecord> told = instances.stream().filter(i -> i.stopRequestedAt() != null && !i.state().isFinal()).toList();
            if (pick < 25) {
                now = now.plusSeconds(random.nextInt(600));
            } else if (pick < 55 && !live.isEmpty()) {
                InstanceRecord instance = live.get(random.nextInt(live.size()));
                int code = new int[] {0, 0, 1, 137}[random.nextInt(4)];
                replace(instance.finished(code == 0 ? InstanceState.SUCCEEDED : InstanceState.FAILED, code, "Exited with code " + code, now));
            } else if (pick < 75 && !told.isEmpty()) {
                stopped(told.get(random.nextInt(told.size())));
            } else if (pick < 80 && !live.isEmpty()) {
                InstanceRecord instance = live.get(random.nextInt(live.size()));
                replace(random.nextBoolean() ? instance.ready(now) : instance.probeFailed("exit code 1"));
            } else if (pick < 85 && !live.isEmpty()) {
                InstanceRecord instance = live.get(random.nextInt(live.size()));
                replace(instance.finished(InstanceState.LOST, null, "Lost: its supervisor is gone", now));
            } else if (pick < 89 && run.state() == RunState.RUNNING) {
                run = run.preempting(new RunId("owner-r1"), "Reclaimed by owner-r1");
            } else if (pick < 91) {
                downNodes.put("node-" + random.nextInt(3), "maintenance");
            } else if (pick < 92) {
                drainingNodes.put("node-" + random.nextInt(3), "by admin");
            } else if (pick < 95) {
                downNodes.clear();
                drainingNodes.clear();
            } else if (pick < 97) {
                run = run.withCancelRequestedAt(now);
            } else {
                now = now.plusMillis(random.nextInt(1500));
            }
        }

        /** An instance told to stop is gone, as its executor reports it. */
        private void stopped(InstanceRecord instance) {
            boolean preempted = run.restartCause() == FaultState.RestartCause.PREEMPTION;
            InstanceState state = downNodes.containsKey(instance.node()) ? InstanceState.NODE_LOST
                    : preempted ? InstanceState.RESOURCE_PREEMPTED : InstanceState.KILLED;
            replace(instance.finished(state, 143, "Terminated (exit code 143)", now));
        }

        /** The control loop's part: steps until the run stays, checking every step. */
        private void settle() {
            Set<InstanceId> unconfirmed = Set.of();
            for (int i = 0; ; i++) {
                assertThat(i).as(what("the lifecycle settles")).isLessThan(64);
                Observation seen = new Observation(now, downNodes, drainingNodes, unconfirmed, Map.of(), Map.of());
                Step step = LIFECYCLE.next(run, instances, seen);
                steps++;
                if (!step.accept(new Apply())) {
                    break;
                }
            }
            checkBudgets();
        }

        private void checkBudgets() {
            FaultTolerance policy = spec.faultTolerance();
            assertThat(run.faults().failures()).as(what("failures within maxRestarts")).isLessThanOrEqualTo(policy.maxRestarts());
            assertThat(run.faults().nodeLost()).as(what("lost nodes within budget")).isLessThanOrEqualTo(policy.maxNodeLost());
            assertThat(run.faults().hangs()).as(what("hangs within budget")).isLessThanOrEqualTo(policy.maxHangs());
            if (policy.maxPreemptions() != null) {
                assertThat(run.preemptions()).as(what("preemptions within budget")).isLessThanOrEqualTo(policy.maxPreemptions());
            }
            assertThat(run.faults().workLostMillis()).as(what("work lost only grows")).isGreaterThanOrEqualTo(workLost);
            workLost = run.faults().workLostMillis();
            if (run.state() == RunState.RUNNING) {
                assertThat(instances).as(what("a RUNNING run has launched everything but ranks restarted in place"))
                        .noneMatch(i -> i.state() == InstanceState.PENDING && i.restarts() == 0);
            }
        }

        private final class Apply implements Step.Handler<Boolean> {
            @Override
            public Boolean stay(Step.Stay step) {
                return false;
            }

            @Override
            public Boolean transition(Step.Transition step) {
                move(step.next());
                return true;
            }

            @Override
            public Boolean recordProgress(Step.RecordProgress step) {
                assertThat(step.next().state()).isEqualTo(run.state());
                run = step.next();
                return true;
            }

            @Override
            public Boolean terminate(Step.Terminate step) {
                boolean changed = !step.next().equals(run);
                move(step.next());
                assertThat(run.state()).as(what("a stopping run is TERMINATING")).isIn(RunState.TERMINATING, RunState.STARTING, RunState.RUNNING);
                for (Step.Stop stop : step.stops()) {
                    InstanceRecord instance = current(stop.instance());
                    assertThat(instance.state().isFinal()).as(what("only a live instance is stopped")).isFalse();
                    assertThat(stopsSent.add(instance.id())).as(what("a stop is sent once: " + instance.id())).isTrue();
                    if (instance.state() == InstanceState.PENDING) {
                        replace(instance.finished(InstanceState.KILLED, null, "Never started", now)); // the executor never heard of it
                    } else {
                        replace(instance.stopRequested(now));
                    }
                }
                assertThat(changed || !step.stops().isEmpty()).as(what("a step changes something")).isTrue();
                return true;
            }

            @Override
            public Boolean loseInstances(Step.LoseInstances step) {
                assertThat(step.lost()).isNotEmpty();
                step.lost().forEach(lost -> {
                    assertThat(current(lost).state().isFinal()).isFalse();
                    replace(lost);
                });
                return true;
            }

            @Override
            public Boolean launch(Step.Launch step) {
                assertThat(step.instances()).isNotEmpty();
                for (InstanceRecord instance : step.instances()) {
                    assertThat(current(instance).state()).as(what("only placed instances are launched")).isEqualTo(InstanceState.PENDING);
                    replace(current(instance).running(Map.of("pid", "1"), now));
                }
                return true;
            }

            @Override
            public Boolean restartInstance(Step.RestartInstance step) {
                assertThat(spec.faultTolerance().runType()).as(what("only Async restarts one instance")).isEqualTo(FaultTolerance.RunType.Async);
                InstanceRecord before = current(step.instance());
                assertThat(before.state()).as(what("only a failed instance restarts in place")).isIn(InstanceState.FAILED, InstanceState.KILLED);
                assertThat(step.instance().restarts()).isEqualTo(before.restarts() + 1);
                assertThat(step.instance().node()).as(what("in place")).isEqualTo(before.node());
                assertThat(step.next().state()).as(what("the run goes on")).isEqualTo(run.state());
                assertThat(step.next().attempt()).isEqualTo(run.attempt());
                replace(step.instance());
                stopsSent.remove(step.instance().id()); // a new process of the rank: it may be told to stop in turn
                restartsInPlace++;
                run = step.next();
                return true;
            }

            @Override
            public Boolean changeWorld(Step.ChangeWorld step) {
                throw new AssertionError(what("a rigid run's world never changes"));
            }

            @Override
            public Boolean requeue(Step.Requeue step) {
                assertThat(instances).as(what("queued again only once all are gone")).allMatch(i -> i.state().isFinal());
                assertThat(step.next().attempt()).isEqualTo(run.attempt() + 1);
                move(step.next());
                instances = new ArrayList<>();
                return true;
            }

            @Override
            public Boolean end(Step.End step) {
                assertThat(instances).as(what("ends only once all are gone")).allMatch(i -> i.state().isFinal());
                move(step.next());
                assertThat(run.state().isFinal()).isTrue();
                return false;
            }
        }

        private void move(RunRecord next) {
            if (next.state() != run.state()) {
                assertThat(run.state().canMoveTo(next.state()) || run.state() == RunState.STARTING && next.state() == RunState.SUCCEEDED)
                        .as(what(run.state() + " -> " + next.state())).isTrue();
            }
            run = next;
        }

        private InstanceRecord current(InstanceRecord instance) {
            return instances.stream().filter(i -> i.id().equals(instance.id())).findFirst()
                    .orElseThrow(() -> new AssertionError(what("a step names an instance of this attempt: " + instance.id())));
        }

        private void replace(InstanceRecord updated) {
            instances.replaceAll(i -> i.id().equals(updated.id()) ? updated : i);
        }

        private String what(String invariant) {
            return invariant + " (seed " + seed + ", step " + steps + ", run " + run.state() + " " + run.reason() + ")";
        }
    }

    private static JobSpec job(Random random) {
        JobBuilder job = aJob("job").group("a").replicas(1 + random.nextInt(3));
        if (random.nextInt(3) == 0) {
            job.probe("true");
        }
        if (random.nextBoolean()) {
            job.andGroup("b").replicas(1 + random.nextInt(2));
        }
        if (random.nextBoolean()) {
            job.inOrder();
        }
        if (random.nextInt(4) == 0) {
            job.minSuccess(1);
        }
        if (random.nextInt(3) == 0) {
            job.maxRuntime(Duration.ofMinutes(30 + random.nextInt(60)));
        }
        List<FaultTolerance.ExitCodeRange> codes = random.nextBoolean() ? List.of(new FaultTolerance.ExitCodeRange(128, 255)) : List.of();
        // Drawn apart, so that the Sync lives stay the ones they always were.
        FaultTolerance.RunType type = new Random(random.nextLong()).nextInt(3) == 0 ? FaultTolerance.RunType.Async : FaultTolerance.RunType.Sync;
        return job.faultTolerance(new FaultTolerance(type, random.nextInt(4), random.nextBoolean() ? random.nextInt(3) : null,
                random.nextInt(3), random.nextInt(3), Duration.ofSeconds(10), Duration.ofMinutes(1), codes, List.of(), List.of(),
                random.nextBoolean() ? FaultTolerance.FailureAction.Retry : FaultTolerance.FailureAction.Fail, random.nextInt(3),
                random.nextBoolean() ? Duration.ofMinutes(20) : null, null)).spec();
    }
}
