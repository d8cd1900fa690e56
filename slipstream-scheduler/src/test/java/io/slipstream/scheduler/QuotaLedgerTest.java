package io.slipstream.scheduler;

import static io.slipstream.scheduler.Builders.GI;
import static io.slipstream.scheduler.Builders.aNode;
import static io.slipstream.scheduler.Builders.aQuota;
import static io.slipstream.scheduler.Builders.aRun;
import static io.slipstream.scheduler.Builders.nodes;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.slipstream.api.run.QuotaId;
import io.slipstream.api.run.RealTimeResources;
import io.slipstream.api.spec.IdleMode;
import io.slipstream.api.spec.Resources;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

class QuotaLedgerTest {
    private static QuotaLedger.QuotaLine line(QuotaLedger ledger, String id) {
        return ledger.quota(QuotaId.parse(id)).orElseThrow();
    }

    @Test
    void aQuotaShowsWhatItsRunsHoldAndAskForSplitIntoInQuotaAndBorrowed() {
        QuotaLedger ledger = QuotaLedger.of(new ClusterSnapshot(nodes("n", 4, "h100"), List.of(aQuota("a/gpu").minGpus(8).build()),
                List.of(aRun("r1").quota("a/gpu").gpus(8).running(RealTimeResources.InQuota, 0, "n-1"),
                        aRun("r2").quota("a/gpu").idle(IdleMode.Acceptable).gpus(4).running(RealTimeResources.NotInQuota, 0, "n-2")),
                List.of(aRun("q1").quota("a/gpu").instances(2).gpus(8).build())));

        QuotaLedger.QuotaLine a = line(ledger, "a/gpu");
        assertThat(a.used().gpu()).isEqualTo(12);
        assertThat(a.inQuota().gpu()).isEqualTo(8);
        assertThat(a.borrowed().gpu()).isEqualTo(4);
        assertThat(a.lent().gpu()).isZero();
        assertThat(a.pending().gpu()).isEqualTo(16);
        assertThat(a.pending().milliCpu()).isEqualTo(2 * 32_000);
        assertThat(a.admittedRuns()).isEqualTo(2);
        assertThat(a.pendingRuns()).isEqualTo(1);
        assertThat(ledger.capacity().gpu()).isEqualTo(32);
        assertThat(ledger.unguaranteed().gpu()).isEqualTo(24);
    }

    @Test
    void whatABorrowerOfThePoolHoldsIsLentByTheQuotasThatLeaveTheirGuaranteeUnused() {
        // One tree: org (no guarantee of its own) with children a (8 GPUs, 2 in use) and b (8 GPUs, all in use, borrowing 4 more).
        QuotaLedger ledger = QuotaLedger.of(new ClusterSnapshot(nodes("n", 4, "h100"),
                List.of(aQuota("t/org").minGpus(16).build(), aQuota("t/a").parent("t/org").minGpus(8).build(), aQuota("t/b").parent("t/org").minGpus(8).build()),
                List.of(aRun("a1").quota("t/a").gpus(2).running(RealTimeResources.InQuota, 0, "n-1"),
                        aRun("b1").quota("t/b").gpus(8).running(RealTimeResources.InQuota, 0, "n-2"),
                        aRun("b2").quota("t/b").idle(IdleMode.Acceptable).gpus(4).running(RealTimeResources.NotInQuota, 0, "n-3")),
                List.of()));

        assertThat(line(ledger, "t/org").ownGuarantee().gpu()).isZero();
        assertThat(line(ledger, "t/org").used().gpu()).as("its own runs: none").isZero();
        assertThat(line(ledger, "t/org").subtreeUsed().gpu()).as("what its children hold").isEqualTo(14);
        assertThat(line(ledger, "t/a").subtreeUsed()).as("a leaf has no subtree").isNull();
        assertThat(line(ledger, "t/a").lent().gpu()).isEqualTo(4);
        assertThat(line(ledger, "t/b").lent().gpu()).isZero();
        assertThat(line(ledger, "t/b").borrowed().gpu()).isEqualTo(4);
        QuotaLedger.PoolLine pool = ledger.pool("tree:t/org").orElseThrow();
        assertThat(pool.guaranteed().gpu()).isEqualTo(16);
        assertThat(pool.used().gpu()).isEqualTo(14);
        assertThat(pool.borrowed().gpu()).isEqualTo(4);
        assertThat(pool.lent().gpu()).isEqualTo(4);
        // b holds 4 GPUs beyond its guarantee of what the pool could lend: 16 guaranteed and 16 nobody guarantees.
        assertThat(line(ledger, "t/b").weightedShare()).isEqualTo(4 / 32.0);
        assertThat(line(ledger, "t/a").weightedShare()).isZero();
        assertThat(line(ledger, "t/org").weightedShare()).as("the tree holds less than it guarantees").isZero();
    }

    /**
     * The fair share is what a weighted share is compared with: b borrows a's 8 idle GPUs of the 24 its pool could
     * lend while c queues a borrower. With equal weights both are due half of what is borrowed (4/24): b holds 2.0
     * times its fair share, the figure its waiting runs are told; with c's weight 3, a quarter for b (2/24) and three
     * quarters for c (6/24, weighted 2/24). A quota that neither borrows nor wants to is not counted.
     */
    @Test
    void theFairShareDividesWhatTheQuotasThatWantIdleCapacityBorrowByWeight() {
        for (double weightC : new double[] {1, 3}) {
            List<QuotaState> quotas = List.of(aQuota("t/org").minGpus(24).build(), aQuota("t/a").parent("t/org").minGpus(8).build(),
                    aQuota("t/b").parent("t/org").minGpus(8).build(), aQuota("t/c").parent("t/org").minGpus(8).weight(weightC).build());
            List<ActiveRun> active = List.of(aRun("b1").quota("t/b").gpus(8).running(RealTimeResources.InQuota, 0, "n-1"),
                    aRun("b2").quota("t/b").idle(IdleMode.Acceptable).gpus(8).running(RealTimeResources.NotInQuota, 0, "n-2"),
                    aRun("c1").quota("t/c").gpus(8).running(RealTimeResources.InQuota, 0, "n-3"));
            QuotaLedger alone = QuotaLedger.of(new ClusterSnapshot(nodes("n", 3, "h100"), quotas, active, List.of()));
            assertThat(line(alone, "t/b").fairShare()).as("b alone borrows: all of it is its fair share").isEqualTo(8 / 24.0);
            assertThat(line(alone, "t/a").fairShare()).isEqualTo(8 / 24.0);

            QuotaLedger both = QuotaLedger.of(new ClusterSnapshot(nodes("n", 3, "h100"), quotas, active,
                    List.of(aRun("c2").quota("t/c").idle(IdleMode.Acceptable).gpus(4).build(), aRun("a2").quota("t/a").gpus(4).build())));
            double fair = 8 / 24.0 / (1 + weightC);
            assertThat(line(both, "t/b").weightedShare()).isEqualTo(8 / 24.0);
            assertThat(line(both, "t/b").fairShare()).isCloseTo(fair, within(1e-12));
            assertThat(line(both, "t/c").fairShare()).isCloseTo(fair, within(1e-12));
            assertThat(line(both, "t/b").weightedShare() / line(both, "t/b").fairShare()).isCloseTo(1 + weightC, within(1e-12));
            assertThat(both.pool("tree:t/org").orElseThrow().lendable().gpu()).isEqualTo(24);
        }
    }

    /** An OnlyIdle run on its own team's idle guarantee is borrowed by the team, not lent by it to itself. */
    @Test
    void aTeamIsNotItsOwnLender() {
        QuotaLedger ledger = QuotaLedger.of(new ClusterSnapshot(nodes("n", 4, "h100"),
                List.of(aQuota("t/org").minGpus(16).build(), aQuota("t/a").parent("t/org").minGpus(8).build(), aQuota("t/b").parent("t/org").minGpus(8).build()),
                List.of(aRun("a1").quota("t/a").idle(IdleMode.OnlyIdle).gpus(4).running(RealTimeResources.NotInQuota, 0, "n-1"),
                        aRun("b1").quota("t/b").idle(IdleMode.Acceptable).gpus(12).running(RealTimeResources.NotInQuota, 0, "n-2")),
                List.of()));
        assertThat(line(ledger, "t/a").borrowed().gpu()).isEqualTo(4);
        assertThat(line(ledger, "t/a").lent().gpu()).as("a's 4 on its own guarantee are its own; the other 4 it leaves unused are b's").isEqualTo(4);
        assertThat(line(ledger, "t/b").lent().gpu()).as("b's own 8 hold 8 of what it borrows").isZero();
        assertThat(ledger.pool("tree:t/org").orElseThrow().lent().gpu()).isEqualTo(4);
    }

    @Test
    void borrowingBeyondThePoolsUnusedGuaranteesIsLentByNoQuota() {
        QuotaLedger ledger = QuotaLedger.of(new ClusterSnapshot(nodes("n", 4, "h100"), List.of(aQuota("a/gpu").minGpus(8).build()),
                List.of(aRun("r1").quota("a/gpu").gpus(6).running(RealTimeResources.InQuota, 0, "n-1"),
                        aRun("r2").quota("a/gpu").idle(IdleMode.Acceptable).gpus(8).running(RealTimeResources.NotInQuota, 0, "n-2")),
                List.of()));

        assertThat(line(ledger, "a/gpu").lent().gpu()).as("its own 2 unused GPUs hold 2 of its own 8 borrowed: a team is not its own lender")
                .isZero();
    }

    @Test
    void lendingIsSharedInProportionToWhatEachQuotaLeavesUnusedWithTheRestToTheLargestRemainder() {
        // Unused: a 6, b 3 (c's guarantee is in use); borrowers hold 4 → a 4*6/9 = 2.67, b 4*3/9 = 1.33 → a 3, b 1.
        QuotaLedger ledger = QuotaLedger.of(new ClusterSnapshot(nodes("n", 4, "h100"),
                List.of(aQuota("t/root").min(new Resources(0, 0, 17, null)).build(), aQuota("t/a").parent("t/root").min(new Resources(0, 0, 6, null)).build(),
                        aQuota("t/b").parent("t/root").min(new Resources(0, 0, 3, null)).build(),
                        aQuota("t/c").parent("t/root").min(new Resources(0, 0, 8, null)).build()),
                List.of(aRun("c1").quota("t/c").gpus(8).running(RealTimeResources.InQuota, 0, "n-1"),
                        aRun("c2").quota("t/c").idle(IdleMode.Acceptable).gpus(4).running(RealTimeResources.NotInQuota, 0, "n-2")),
                List.of()));

        assertThat(line(ledger, "t/a").lent().gpu()).isEqualTo(3);
        assertThat(line(ledger, "t/b").lent().gpu()).isEqualTo(1);
        assertThat(line(ledger, "t/c").lent().gpu()).isZero();
    }

    @Test
    void runsWithoutAQuotaOrWhoseQuotaIsGoneArePooledApartAndLendNothing() {
        QuotaLedger ledger = QuotaLedger.of(new ClusterSnapshot(nodes("n", 2, "h100"), List.of(aQuota("a/gpu").minGpus(8).build()),
                List.of(aRun("free").gpus(2).running(RealTimeResources.NotInQuota, 0, "n-1"),
                        aRun("orphan").quota("a/deleted").idle(IdleMode.Acceptable).gpus(1).running(RealTimeResources.NotInQuota, 2, "n-1")),
                List.of(aRun("waiting").gpus(1).build())));

        QuotaLedger.PoolLine none = ledger.pool(QuotaLedger.NO_QUOTA_POOL).orElseThrow();
        assertThat(none.used().gpu()).isEqualTo(3);
        assertThat(none.borrowed().gpu()).isEqualTo(3);
        assertThat(none.pending().gpu()).isEqualTo(1);
        assertThat(none.admittedRuns()).isEqualTo(2);
        assertThat(line(ledger, "a/gpu").lent().gpu()).as("only borrowers of its own pool use its guarantee").isZero();
        assertThat(ledger.quota(QuotaId.parse("a/deleted"))).isEmpty();
    }

    @Test
    void nodesThatAreDownAreNotCapacity() {
        QuotaLedger ledger = QuotaLedger.of(new ClusterSnapshot(List.of(aNode("up").build(), aNode("down").unschedulable().build()), List.of(), List.of(), List.of()));
        assertThat(ledger.capacity().gpu()).isEqualTo(8);
        assertThat(ledger.unguaranteed().gpu()).isEqualTo(8);
    }

    /**
     * Seeded cluster states: whatever runs hold, the ledger adds up. Every run counts once in its quota and once in
     * its pool; inQuota + borrowed = used; each quota lends at most what it leaves unused; a pool lends the lesser of
     * what its borrowers hold and what its quotas leave unused.
     */
    @Test
    void theLedgerAddsUpWhateverTheRunsHold() {
        for (long seed = 1; seed <= 300; seed++) {
            Random random = new Random(seed);
            List<QuotaState> quotas = new ArrayList<>();
            quotas.add(aQuota("t/root").min(new Resources(random.nextInt(64_000), random.nextInt(512) * GI, random.nextInt(32), null)).build());
            int children = 1 + random.nextInt(4);
            for (int i = 0; i < children; i++) {
                quotas.add(aQuota("t/c" + i).parent("t/root").min(new Resources(random.nextInt(32_000), random.nextInt(256) * GI, random.nextInt(16), null)).build());
            }
            quotas.add(aQuota("u/alone").minGpus(random.nextInt(16)).build());
            List<String> quotaNames = new ArrayList<>(quotas.stream().map(q -> q.id().toString()).toList());
            quotaNames.add(null);
            quotaNames.add("t/gone");
            List<ActiveRun> active = new ArrayList<>();
            List<PendingRun> pending = new ArrayList<>();
            Amount allHeld = new Amount();
            for (int i = 0; i < 20; i++) {
                String quota = quotaNames.get(random.nextInt(quotaNames.size()));
                Builders.RunBuilder run = aRun("r" + i).quota(quota).idle(IdleMode.Acceptable).gpus(random.nextInt(5)).instances(1 + random.nextInt(2));
                if (random.nextBoolean()) {
                    ActiveRun held = run.running(random.nextBoolean() ? RealTimeResources.InQuota : RealTimeResources.NotInQuota, 0, "n-1", "n-2");
                    held.allocations().forEach(a -> allHeld.add(a.resources(), 1));
                    active.add(held);
                } else {
                    pending.add(run.build());
                }
            }
            QuotaLedger ledger = QuotaLedger.of(new ClusterSnapshot(nodes("n", 4, "h100"), quotas, active, pending));
            String context = "seed " + seed;

            Amount pools = new Amount();
            int admitted = 0;
            for (QuotaLedger.PoolLine pool : ledger.pools()) {
                pools.add(pool.used(), 1);
                admitted += pool.admittedRuns();
                assertThat(pool.inQuota().plus(pool.borrowed())).as(context).isEqualTo(pool.used());
            }
            assertThat(pools.toResources()).as("%s: every held resource counts in one pool", context).isEqualTo(allHeld.toResources());
            assertThat(admitted).as(context).isEqualTo(active.size());
            for (QuotaLedger.QuotaLine quota : ledger.quotas()) {
                assertThat(quota.inQuota().plus(quota.borrowed())).as(context).isEqualTo(quota.used());
                Resources unused = quota.ownGuarantee().minus(quota.inQuota());
                assertThat(unused.covers(quota.lent())).as("%s: %s lends %s of %s unused", context, quota.quota(), quota.lent(), unused).isTrue();
            }
            for (QuotaLedger.PoolLine pool : ledger.pools()) {
                // What a quota's own runs borrow is held by its own unused guarantee first (it lends none of that).
                Amount unusedInPool = new Amount();
                Amount selfInPool = new Amount();
                Amount lentInPool = new Amount();
                ledger.quotas().stream().filter(q -> q.pool().equals(pool.pool())).forEach(q -> {
                    Resources unused = q.ownGuarantee().minus(q.inQuota());
                    unusedInPool.add(unused, 1);
                    selfInPool.add(new Resources(Math.min(unused.milliCpu(), q.borrowed().milliCpu()), Math.min(unused.memoryBytes(), q.borrowed().memoryBytes()),
                            Math.min(unused.gpu(), q.borrowed().gpu()), null), 1);
                    lentInPool.add(q.lent(), 1);
                });
                Resources expected = new Resources(
                        Math.min(pool.borrowed().milliCpu() - selfInPool.milliCpu, unusedInPool.milliCpu - selfInPool.milliCpu),
                        Math.min(pool.borrowed().memoryBytes() - selfInPool.memory, unusedInPool.memory - selfInPool.memory),
                        (int) Math.min(pool.borrowed().gpu() - selfInPool.gpu, unusedInPool.gpu - selfInPool.gpu), null);
                assertThat(lentInPool.toResources()).as("%s: pool %s", context, pool.pool()).isEqualTo(expected);
                assertThat(pool.lent()).as(context).isEqualTo(expected);
            }
        }
    }
}
