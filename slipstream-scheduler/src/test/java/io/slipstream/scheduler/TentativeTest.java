package io.slipstream.scheduler;

import static io.slipstream.api.run.RealTimeResources.InQuota;
import static io.slipstream.api.run.RealTimeResources.NotInQuota;
import static io.slipstream.scheduler.Builders.GI;
import static io.slipstream.scheduler.Builders.aNode;
import static io.slipstream.scheduler.Builders.aQuota;
import static io.slipstream.scheduler.Builders.aRun;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.slipstream.api.run.QuotaId;
import io.slipstream.api.run.RealTimeResources;
import io.slipstream.api.spec.Resources;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Random;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Tentatives over a state's working cluster and quota book. Each script of changes, tentatives opened, committed and
 * discarded must leave the state exactly as the changes that were kept would, applied alone and with no tentative
 * (node by node, GPU by GPU, every running sum of the book, the buckets); and, all of it inside one more tentative
 * that is discarded, exactly as it was.
 */
class TentativeTest {
    /** In a topology (two blocks, three racks): the domains' free totals are part of what a rollback puts back. */
    private static final List<NodeState> NODES = List.of(aNode("n-1").in("b1", "r1").build(), aNode("n-2").in("b1", "r2").build(),
            aNode("n-3").model("h100").in("b2", "r1").build(), aNode("n-4").in("b2", "r1").unschedulable().build());
    private static final List<QuotaState> QUOTAS = List.of(aQuota("a/gpu").minGpus(8).maxGpus(16).build(), aQuota("b/gpu").minGpus(4).build(),
            aQuota("d/h100").dedicated("h100").minGpus(8).build());
    /** A guaranteed run of a (pinned), a borrower of b, a guaranteed run of d. */
    private static final List<ActiveRun> ACTIVE = List.of(aRun("a-1").quota("a/gpu").gpus(4).running(InQuota, 0, "n-1"),
            aRun("b-1").quota("b/gpu").gpus(2).running(NotInQuota, 0, "n-2"), aRun("d-1").quota("d/h100").gpus(8).running(InQuota, 0, "n-3"));

    /** One step of a script. */
    sealed interface Step permits Open, Commit, Discard, Change {
    }

    record Open() implements Step {
        @Override
        public String toString() {
            return "open";
        }
    }

    record Commit() implements Step {
        @Override
        public String toString() {
            return "commit";
        }
    }

    record Discard() implements Step {
        @Override
        public String toString() {
            return "discard";
        }
    }

    /** A change of the cluster or the book: the same function of the state with or without tentatives. */
    record Change(String name, Consumer<ClusterState> apply) implements Step {
        @Override
        public String toString() {
            return name;
        }
    }

    record Case(String name, List<Step> steps) {
        @Override
        public String toString() {
            return name;
        }
    }

    static Stream<Case> cases() {
        return Stream.of(
                new Case("a discarded tentative puts back node and quota changes made in any order",
                        List.of(open(), take("n-1", 2), charge("a/gpu", 2, InQuota, 1), release("b-1"), charge("b/gpu", 2, NotInQuota, -1),
                                reserve(1), take("n-3", 0), discard())),
                new Case("a committed tentative keeps its changes", List.of(open(), take("n-1", 2), charge("a/gpu", 2, InQuota, 1), commit())),
                new Case("an inner discard leaves the outer's changes as they are",
                        List.of(open(), take("n-1", 1), charge("a/gpu", 1, InQuota, 1), open(), take("n-1", 2), charge("a/gpu", 2, InQuota, 1),
                                release("a-1"), discard(), take("n-2", 1), commit())),
                new Case("an inner commit hands its changes to the outer, whose discard undoes them too",
                        List.of(open(), take("n-2", 1), open(), charge("b/gpu", 1, NotInQuota, 1), release("a-1"), commit(), take("n-1", 3), discard())),
                new Case("of two inner ones, the committed one is kept and the discarded one is not",
                        List.of(open(), open(), take("n-1", 2), promote("a/gpu", 2), commit(), open(), charge("b/gpu", 3, InQuota, 1), take("n-2", 2),
                                discard(), commit())),
                new Case("three deep, node and book changes interleaved, the middle one discarded",
                        List.of(open(), charge("a/gpu", 1, NotInQuota, 1), open(), take("n-2", 1), open(), charge("b/gpu", 1, InQuota, 1), release("b-1"),
                                commit(), take("n-2", 4), discard(), reserve(2), commit())),
                new Case("one node changed again and again goes back to its first state",
                        List.of(open(), take("n-1", 1), take("n-1", 1), release("a-1"), hold("a-1"), release("a-1"), takePinned("n-1", 2, "a/gpu"),
                                discard())),
                new Case("a pinned allocation given back and held again, kept", List.of(open(), release("a-1"), open(), hold("a-1"), discard(), hold("a-1"),
                        commit())),
                new Case("changes outside any tentative are final, those inside one are not",
                        List.of(take("n-1", 1), charge("a/gpu", 1, InQuota, 1), open(), take("n-1", 1), charge("a/gpu", 1, InQuota, -1), discard(),
                                take("n-2", 1))),
                new Case("a gang placed and a gang that fits nowhere (its own tentative, discarded inside ours)",
                        List.of(open(), place("g-1", 2, 4), place("g-2", 3, 8), commit(), open(), place("g-3", 1, 8), discard())),
                new Case("nodes held for a waiting gang, and whole nodes reserved", List.of(open(), reserve(1), reserveFor("w", 2, 8), take("n-2", 1),
                        discard(), open(), reserveFor("w", 1, 8), commit())),
                new Case("a quota with no entry and runs without one charge their pools", List.of(open(), charge(null, 2, NotInQuota, 1),
                        charge("x/none", 1, NotInQuota, 1), open(), charge(null, 1, NotInQuota, -1), commit(), discard())));
    }

    @ParameterizedTest
    @MethodSource("cases")
    void leavesWhatWasKept(Case row) {
        assertScript(row.steps());
    }

    @ParameterizedTest
    @MethodSource("cases")
    void aDiscardedTentativeAroundItAllRestoresTheStateExactly(Case row) {
        ClusterState state = ClusterState.of(new ClusterSnapshot(NODES, QUOTAS, ACTIVE, List.of()));
        String before = state.contents();
        state.tryAndUndo(() -> {
            run(state, row.steps());
            return null;
        });
        assertThat(state.contents()).isEqualTo(before);
    }

    /** Random scripts, rerunnable by seed: every change kind, nested up to five deep, committed or discarded at random. */
    @Test
    void randomScriptsLeaveWhatWasKept() {
        for (long seed = 1; seed <= 300; seed++) {
            Random random = new Random(seed);
            List<Step> steps = new ArrayList<>();
            int depth = 0;
            for (int i = 0; i < 40; i++) {
                int pick = random.nextInt(10);
                if (pick < 2 && depth < 5) {
                    steps.add(open());
                    depth++;
                } else if (pick < 4 && depth > 0) {
                    steps.add(random.nextBoolean() ? commit() : discard());
                    depth--;
                } else {
                    steps.add(randomChange(random));
                }
            }
            for (; depth > 0; depth--) {
                steps.add(random.nextBoolean() ? commit() : discard());
            }
            try {
                assertScript(steps);
            } catch (AssertionError e) {
                throw new AssertionError("seed " + seed + ": " + steps, e);
            }
        }
    }

    @Test
    void tentativesCloseInnermostFirst() {
        ClusterState state = ClusterState.of(new ClusterSnapshot(NODES, QUOTAS, ACTIVE, List.of()));
        Tentative outer = state.tentative();
        Tentative inner = state.tentative();
        assertThatThrownBy(outer::commit).isInstanceOf(IllegalStateException.class).hasMessageContaining("inner");
        assertThatThrownBy(outer::discard).isInstanceOf(IllegalStateException.class).hasMessageContaining("inner");
        inner.commit();
        assertThatThrownBy(inner::commit).isInstanceOf(IllegalStateException.class).hasMessageContaining("already");
        inner.close(); // closing a committed one changes nothing
        outer.discard();
        assertThatThrownBy(outer::discard).isInstanceOf(IllegalStateException.class).hasMessageContaining("already");
    }

    @Test
    void aCycleIsTheOutermostTentative() {
        ClusterState state = ClusterState.of(new ClusterSnapshot(NODES, QUOTAS, ACTIVE, List.of()));
        Tentative cycle = state.cycle();
        assertThatThrownBy(state::cycle).isInstanceOf(IllegalStateException.class).hasMessageContaining("already under way");
        cycle.discard();
        Tentative open = state.tentative();
        assertThatThrownBy(state::cycle).as("a cycle inside another tentative").isInstanceOf(IllegalStateException.class);
        open.discard();
        state.cycle().close();
    }

    @Test
    @SuppressWarnings("try") // the tentative is closed by the exception, which is what is tested
    void anExceptionDiscardsWhatWasTried() {
        ClusterState state = ClusterState.of(new ClusterSnapshot(NODES, QUOTAS, ACTIVE, List.of()));
        String before = state.contents();
        assertThatThrownBy(() -> {
            try (Tentative trial = state.tentative()) {
                state.cluster.take(state.cluster.node("n-1"), gpus(2));
                state.book.charge(QuotaId.parse("a/gpu"), gpus(2), InQuota, 1);
                throw new IllegalStateException("boom");
            }
        }).hasMessage("boom");
        assertThat(state.contents()).isEqualTo(before);
    }

    @Test
    void theJournalKeepsNothingOnceTheOutermostIsCommittedOrNothingIsOpen() {
        Journal journal = new Journal();
        WorkingCluster cluster = new WorkingCluster(NODES, journal);
        cluster.take(cluster.node("n-1"), gpus(1));
        assertThat(journal.size()).as("nothing is written while no tentative is open").isZero();
        Tentative outer = journal.open();
        cluster.take(cluster.node("n-1"), gpus(1));
        Tentative inner = journal.open();
        cluster.take(cluster.node("n-2"), gpus(1));
        inner.commit();
        assertThat(journal.size()).as("an inner commit keeps its entries for the outer one").isEqualTo(2);
        Tentative discarded = journal.open();
        cluster.take(cluster.node("n-2"), gpus(1));
        discarded.discard();
        assertThat(journal.size()).isEqualTo(2);
        outer.commit();
        assertThat(journal.size()).isZero();
    }

    /** Runs the script, and the kept changes alone with no tentative on a state of their own: both states must be equal. */
    private static void assertScript(List<Step> steps) {
        ClusterState state = ClusterState.of(new ClusterSnapshot(NODES, QUOTAS, ACTIVE, List.of()));
        run(state, steps);
        ClusterState expected = ClusterState.of(new ClusterSnapshot(NODES, QUOTAS, ACTIVE, List.of()));
        kept(steps).forEach(change -> change.apply().accept(expected));
        assertThat(state.contents()).as("%s", steps).isEqualTo(expected.contents());
        state.cycle().close(); // every tentative was closed
    }

    private static void run(ClusterState state, List<Step> steps) {
        Deque<Tentative> open = new ArrayDeque<>();
        for (Step step : steps) {
            if (step instanceof Open) {
                open.push(state.tentative());
            } else if (step instanceof Commit) {
                open.pop().commit();
            } else if (step instanceof Discard) {
                open.pop().discard();
            } else {
                ((Change) step).apply().accept(state);
            }
        }
        assertThat(open).as("the script closes what it opens").isEmpty();
    }

    /** The changes a script keeps: those of no tentative, or of committed ones inside committed ones all the way out. */
    private static List<Change> kept(List<Step> steps) {
        Deque<List<Change>> open = new ArrayDeque<>();
        List<Change> kept = new ArrayList<>();
        for (Step step : steps) {
            if (step instanceof Open) {
                open.push(new ArrayList<>());
            } else if (step instanceof Commit) {
                List<Change> committed = open.pop();
                (open.isEmpty() ? kept : open.peek()).addAll(committed);
            } else if (step instanceof Discard) {
                open.pop();
            } else {
                (open.isEmpty() ? kept : open.peek()).add((Change) step);
            }
        }
        return kept;
    }

    private static Change randomChange(Random random) {
        String node = "n-" + (1 + random.nextInt(4));
        String quota = List.of("a/gpu", "b/gpu", "d/h100").get(random.nextInt(3));
        RealTimeResources where = random.nextBoolean() ? InQuota : NotInQuota;
        String run = ACTIVE.get(random.nextInt(ACTIVE.size())).id().value();
        return switch (random.nextInt(9)) {
            case 0 -> take(node, random.nextInt(3));
            case 1 -> takePinned(node, 1 + random.nextInt(2), quota);
            case 2 -> charge(quota, 1 + random.nextInt(4), where, random.nextBoolean() ? 1 : -1);
            case 3 -> promote(quota, 1 + random.nextInt(2));
            case 4 -> release(run);
            case 5 -> hold(run);
            case 6 -> reserve(random.nextInt(3));
            case 7 -> place("g", 1 + random.nextInt(3), 1 + random.nextInt(8));
            default -> reserveFor("w", 1 + random.nextInt(2), 8);
        };
    }

    private static Open open() {
        return new Open();
    }

    private static Commit commit() {
        return new Commit();
    }

    private static Discard discard() {
        return new Discard();
    }

    /** Takes GPUs (and their cpu and memory) on a node, if they are free: the lowest free GPUs. */
    private static Change take(String node, int count) {
        return new Change("take " + count + " on " + node, state -> {
            WorkingNode working = state.cluster.node(node);
            if (working.fitsNow(gpus(count))) {
                state.cluster.take(working, gpus(count));
            }
        });
    }

    private static Change takePinned(String node, int count, String quota) {
        return new Change("take " + count + " on " + node + " for " + quota, state -> {
            WorkingNode working = state.cluster.node(node);
            if (working.fitsNow(gpus(count))) {
                state.cluster.take(working, gpus(count), QuotaId.parse(quota));
            }
        });
    }

    private static Change charge(String quota, int count, RealTimeResources where, int sign) {
        QuotaId id = quota == null ? null : QuotaId.parse(quota);
        return new Change("charge " + quota + " " + (sign * count) + " " + where, state -> state.book.charge(id, gpus(count), where, sign));
    }

    private static Change promote(String quota, int count) {
        return new Change("promote " + count + " of " + quota, state -> state.book.promote(QuotaId.parse(quota), gpus(count)));
    }

    /** Gives back what an active run holds (as a victim search does; its pin is left). */
    private static Change release(String run) {
        return new Change("release " + run, state -> active(run).allocations().forEach(state.cluster::release));
    }

    private static Change hold(String run) {
        return new Change("hold " + run, state -> active(run).allocations().forEach(a -> state.cluster.hold(a, ClusterState.pinOf(active(run)))));
    }

    private static Change reserve(int wholeNodes) {
        return new Change("reserve " + wholeNodes + " whole nodes", state -> state.cluster.wholeReserve(wholeNodes));
    }

    private static Change place(String name, int instances, int gpusEach) {
        PendingRun run = aRun(name).instances(instances).gpus(gpusEach).build();
        return new Change("place " + instances + "x" + gpusEach, state -> state.cluster.placeGang(run.instances(), null, null));
    }

    private static Change reserveFor(String name, int instances, int gpusEach) {
        PendingRun run = aRun(name).instances(instances).gpus(gpusEach).build();
        return new Change("hold nodes for " + instances + "x" + gpusEach, state -> state.cluster.reserveFor(run.instances(), null));
    }

    private static ActiveRun active(String name) {
        return ACTIVE.stream().filter(r -> r.id().value().equals(name)).findFirst().orElseThrow();
    }

    private static Resources gpus(int count) {
        return new Resources(count * 4000L, count * 32 * GI, count, null);
    }
}
