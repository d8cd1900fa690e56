package io.slipstream.scheduler;

import static io.slipstream.scheduler.Builders.aQuota;
import static io.slipstream.scheduler.Builders.aRun;
import static io.slipstream.scheduler.Builders.nodes;
import static org.assertj.core.api.Assertions.assertThat;

import io.slipstream.api.run.QuotaId;
import io.slipstream.api.run.RunId;
import io.slipstream.api.spec.IdleMode;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * No loops: seeded random pools (guarantees, weights, a middle level sometimes), arrivals of borrowers and ends of runs;
 * after each arrival or end the scheduler runs to a fixed point ({@link Settling}, victims stopping for one or two
 * cycles), and no run may be preempted for fairness twice in it, nor two quotas preempt each other back and forth.
 * Rerun one sequence with {@code -Dfairness.loops.seed=N}. A weakened rule (a quota preempts one whose share is above
 * its own, without the final-share condition) fails the same check: {@link #theCheckCatchesAWeakenedRule}.
 */
class FairPreemptionLoopsTest {
    private static final int SEEDS = 200;

    @Test
    void noRunIsPreemptedTwiceAndNoTwoQuotasPreemptEachOtherWithoutAnArrivalOrAnEnd() {
        Long only = Long.getLong("fairness.loops.seed");
        for (long seed = only == null ? 1 : only; seed <= (only == null ? SEEDS : only); seed++) {
            assertThat(violation(seed, new Scheduler())).as("seed %d", seed).isNull();
        }
    }

    @Test
    void theCheckCatchesAWeakenedRule() {
        Scheduler weakened = new Scheduler(Defragmentation.DEFAULT, (preemptorBefore, preemptorAfter, targetBefore, targetAfter) -> preemptorBefore < targetBefore);
        List<String> found = new ArrayList<>();
        for (long seed = 1; seed <= SEEDS && found.isEmpty(); seed++) {
            String violation = violation(seed, weakened);
            if (violation != null) {
                found.add("seed " + seed + ": " + violation);
            }
        }
        assertThat(found).isNotEmpty();
    }

    /** What went wrong in the sequence of this seed, or {@code null}. */
    private static String violation(long seed, Scheduler scheduler) {
        Random random = new Random(seed);
        int nodeCount = 2 + random.nextInt(4);
        List<QuotaState> quotas = new ArrayList<>();
        quotas.add(aQuota("org/root").minGpus(nodeCount * 8).build());
        quotas.add(aQuota("lender/q").minGpus(random.nextInt(nodeCount * 8 + 1)).parent("org/root").build());
        double[] weights = {0.5, 1, 1, 2, 3};
        List<String> parents = new ArrayList<>(List.of("org/root"));
        if (random.nextBoolean()) {
            quotas.add(aQuota("mid/q").parent("org/root").weight(weights[random.nextInt(weights.length)]).build());
            parents.add("mid/q");
        }
        List<String> teams = new ArrayList<>();
        for (int t = 0; t < 2 + random.nextInt(3); t++) {
            String id = "t" + t + "/q";
            quotas.add(aQuota(id).minGpus(random.nextInt(5)).parent(parents.get(random.nextInt(parents.size()))).weight(weights[random.nextInt(weights.length)])
                    .build());
            teams.add(id);
        }
        Settling cluster = new Settling(scheduler, nodes("n", nodeCount, "sim-gpu"), quotas, 1 + random.nextInt(2));
        int[] sizes = {1, 2, 2, 4, 8};
        int submitted = 0;
        for (int event = 0; event < 12; event++) {
            List<RunId> running = cluster.active.values().stream().filter(r -> !r.stopping()).map(ActiveRun::id).toList();
            if (running.isEmpty() || random.nextInt(10) < 6) {
                String team = teams.get(random.nextInt(teams.size()));
                int gpus = sizes[random.nextInt(sizes.length)];
                for (int i = random.nextInt(8); i >= 0; i--, submitted++) {
                    cluster.submit(aRun(String.format("%s-%03d", team.substring(0, team.indexOf('/')), submitted)).quota(team)
                            .idle(random.nextBoolean() ? IdleMode.OnlyIdle : IdleMode.Acceptable).priority(random.nextInt(2)).gpus(gpus)
                            .submittedSecondsAfterStart(submitted).build());
                }
            } else {
                cluster.end(running.get(random.nextInt(running.size())));
            }
            int before = cluster.fairPreemptions.size();
            try {
                cluster.settle(200);
            } catch (AssertionError notSettled) {
                return "event " + event + ": " + notSettled.getMessage();
            }
            List<Settling.Preemption> settling = cluster.fairPreemptions.subList(before, cluster.fairPreemptions.size());
            Set<RunId> victims = new HashSet<>();
            Set<List<QuotaId>> pairs = new HashSet<>();
            for (Settling.Preemption p : settling) {
                if (!victims.add(p.victim())) {
                    return "event " + event + ": run " + p.victim() + " was preempted for fairness twice: " + settling;
                }
                pairs.add(List.of(p.forQuota(), p.victimQuota()));
                if (pairs.contains(List.of(p.victimQuota(), p.forQuota()))) {
                    return "event " + event + ": " + p.forQuota() + " and " + p.victimQuota() + " preempted each other: " + settling;
                }
            }
        }
        return null;
    }
}
