package io.slipstream.scheduler;

import static io.slipstream.scheduler.Builders.GI;
import static io.slipstream.scheduler.Builders.aNode;
import static io.slipstream.scheduler.Builders.aQuota;
import static io.slipstream.scheduler.Builders.nodes;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.slipstream.api.run.QuotaId;
import io.slipstream.api.spec.Resources;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** The weighted share of each quota ({@link FairShares}): a table of pools, what their quotas hold, and the shares. */
class FairSharesTest {
    private static final double INFINITE = Double.POSITIVE_INFINITY;

    /** A row: nodes, quotas, what each quota's runs hold (GPUs, with 4 cpu and 32Gi each), the expected shares. */
    record Case(String name, List<NodeState> nodes, List<QuotaState> quotas, Map<String, Resources> holds, Map<String, Double> shares) {
        @Override
        public String toString() {
            return name;
        }
    }

    static Resources gpus(int gpus) {
        return new Resources(gpus * 4000L, gpus * 32 * GI, gpus, null);
    }

    /** The cluster: 3 nodes of 8 GPUs under one root of 24, teams a, b and c guaranteed 8 each. */
    static List<QuotaState> teams(double weightA, double weightB, double weightC) {
        return List.of(aQuota("org/root").minGpus(24).build(), aQuota("a/gpu").minGpus(8).parent("org/root").weight(weightA).build(),
                aQuota("b/gpu").minGpus(8).parent("org/root").weight(weightB).build(), aQuota("c/gpu").minGpus(8).parent("org/root").weight(weightC).build());
    }

    static Stream<Case> cases() {
        return Stream.of(
                new Case("what a quota holds within its guarantee is no share", nodes("n", 3, "sim-gpu"), teams(1, 1, 1), Map.of("b/gpu", gpus(8), "c/gpu", gpus(4)),
                        Map.of("a/gpu", 0.0, "b/gpu", 0.0, "c/gpu", 0.0)),
                new Case("beyond its guarantee, over what the pool could lend", nodes("n", 3, "sim-gpu"), teams(1, 1, 1), Map.of("b/gpu", gpus(16), "c/gpu", gpus(8)),
                        Map.of("a/gpu", 0.0, "b/gpu", 8 / 24.0, "c/gpu", 0.0)),
                new Case("divided by the weight", nodes("n", 3, "sim-gpu"), teams(1, 2, 0.5), Map.of("b/gpu", gpus(12), "c/gpu", gpus(10)),
                        Map.of("b/gpu", 4 / 24.0 / 2, "c/gpu", 2 / 24.0 / 0.5)),
                new Case("weight 0 is infinite while it borrows, 0 while it does not", nodes("n", 3, "sim-gpu"), teams(1, 0, 0), Map.of("b/gpu", gpus(9), "c/gpu", gpus(8)),
                        Map.of("b/gpu", INFINITE, "c/gpu", 0.0)),
                new Case("capacity no quota guarantees is lendable too", nodes("n", 4, "sim-gpu"), teams(1, 1, 1), Map.of("b/gpu", gpus(16)),
                        Map.of("b/gpu", 8 / 32.0)),
                new Case("the dominant resource counts: cpu beyond the guarantee more than GPUs", nodes("n", 3, "sim-gpu"), teams(1, 1, 1),
                        Map.of("b/gpu", new Resources(8 * 4000L + 48_000, 8 * 32 * GI, 10, null)), Map.of("b/gpu", 48 / 96.0)),
                new Case("a resource the pool cannot lend is left out of the fraction",
                        List.of(aNode("n-1").gpus(0).build(), aNode("n-2").gpus(0).build(), aNode("n-3").gpus(0).build()),
                        List.of(aQuota("org/root").min(new Resources(96_000, 768 * GI, 0, null)).build(),
                                aQuota("b/gpu").min(new Resources(48_000, 384 * GI, 0, null)).parent("org/root").build()),
                        Map.of("b/gpu", new Resources(60_000, 384 * GI, 4, null)), Map.of("b/gpu", 12 / 96.0)),
                new Case("nested: a subtree counts what all of it holds beyond all its guarantees, with its own weight", nodes("n", 3, "sim-gpu"),
                        List.of(aQuota("org/root").minGpus(24).build(), aQuota("d1/gpu").minGpus(16).parent("org/root").weight(2).build(),
                                aQuota("x/gpu").minGpus(8).parent("d1/gpu").build(), aQuota("y/gpu").minGpus(8).parent("d1/gpu").weight(4).build(),
                                aQuota("d2/gpu").minGpus(8).parent("org/root").build(), aQuota("z/gpu").minGpus(8).parent("d2/gpu").build()),
                        Map.of("x/gpu", gpus(16), "y/gpu", gpus(12), "z/gpu", gpus(0)),
                        Map.of("d1/gpu", 12 / 24.0 / 2, "x/gpu", 8 / 24.0, "y/gpu", 4 / 24.0 / 4, "d2/gpu", 0.0, "z/gpu", 0.0)),
                new Case("nested: a child borrowing its sibling's unused guarantee leaves its subtree within its guarantee", nodes("n", 3, "sim-gpu"),
                        List.of(aQuota("org/root").minGpus(24).build(), aQuota("d1/gpu").minGpus(16).parent("org/root").build(),
                                aQuota("x/gpu").minGpus(8).parent("d1/gpu").build(), aQuota("y/gpu").minGpus(8).parent("d1/gpu").build()),
                        Map.of("x/gpu", gpus(14)), Map.of("d1/gpu", 0.0, "x/gpu", 6 / 24.0, "y/gpu", 0.0)),
                new Case("a parent's own guarantee and runs count in its subtree", nodes("n", 3, "sim-gpu"),
                        List.of(aQuota("org/root").minGpus(24).build(), aQuota("p/gpu").minGpus(16).parent("org/root").build(),
                                aQuota("k/gpu").minGpus(8).parent("p/gpu").build()),
                        Map.of("p/gpu", gpus(12), "k/gpu", gpus(8)), Map.of("p/gpu", 4 / 24.0, "k/gpu", 0.0)),
                new Case("Dedicated quotas of a model are one level", nodes("n", 2, "sim-gpu"),
                        List.of(aQuota("a/h100").dedicated("h100").minGpus(8).weight(3).build(), aQuota("b/h100").dedicated("h100").minGpus(8).build()),
                        Map.of("a/h100", gpus(14), "b/h100", gpus(2)), Map.of("a/h100", 6 / 16.0 / 3, "b/h100", 0.0)));
    }

    @ParameterizedTest
    @MethodSource("cases")
    void shares(Case row) {
        QuotaBook book = new QuotaBook(row.quotas(), row.nodes());
        Map<QuotaId, Amount> holds = new java.util.HashMap<>();
        row.holds().forEach((quota, amount) -> holds.put(QuotaId.parse(quota), new Amount(amount)));
        FairShares shares = FairShares.of(book, holds::get);
        row.shares().forEach((quota, share) -> assertThat(shares.weightedShare(QuotaId.parse(quota))).as(quota).isCloseTo(share, within(1e-12)));
    }

    @Test
    void chargingAQuotaChangesItsSubtreeUpToThePoolAndNothingElse() {
        List<QuotaState> quotas = List.of(aQuota("org/root").minGpus(24).build(), aQuota("d1/gpu").minGpus(16).parent("org/root").build(),
                aQuota("x/gpu").minGpus(8).parent("d1/gpu").build(), aQuota("y/gpu").minGpus(8).parent("d1/gpu").build(),
                aQuota("d2/gpu").minGpus(8).parent("org/root").build());
        QuotaBook book = new QuotaBook(quotas, nodes("n", 3, "sim-gpu"));
        FairShares shares = FairShares.of(book, quota -> null);
        shares.charge(QuotaId.parse("x/gpu"), gpus(12));
        assertThat(shares.weightedShare(QuotaId.parse("x/gpu"))).isCloseTo(4 / 24.0, within(1e-12));
        assertThat(shares.weightedShare(QuotaId.parse("d1/gpu"))).isZero();
        shares.charge(QuotaId.parse("y/gpu"), gpus(6));
        assertThat(shares.weightedShare(QuotaId.parse("d1/gpu"))).isCloseTo(2 / 24.0, within(1e-12));
        assertThat(shares.weightedShare(QuotaId.parse("d2/gpu"))).isZero();
        // The share after a run is admitted, before it is.
        assertThat(shares.share(shares.leafOf(QuotaId.parse("y/gpu")), gpus(2))).isZero();
        assertThat(shares.share(shares.leafOf(QuotaId.parse("y/gpu")), gpus(4))).isCloseTo(2 / 24.0, within(1e-12));
        assertThat(shares.share(shares.leafOf(QuotaId.parse("x/gpu")), gpus(4))).isCloseTo(8 / 24.0, within(1e-12));
    }

    @Test
    void parentsThatGoRoundEndAsTopsOfTheirOwn() {
        List<QuotaState> quotas = List.of(aQuota("a/q").minGpus(8).parent("b/q").build(), aQuota("b/q").minGpus(8).parent("a/q").build());
        QuotaBook book = new QuotaBook(quotas, nodes("n", 2, "sim-gpu"));
        FairShares shares = FairShares.of(book, quota -> new Amount(gpus(12)));
        assertThat(shares.weightedShare(QuotaId.parse("a/q"))).isFinite();
        assertThat(shares.leafOf(QuotaId.parse("a/q"))).isNotSameAs(shares.leafOf(QuotaId.parse("b/q")));
    }
}
