package io.slipstream.scheduler;

import static io.slipstream.api.run.RealTimeResources.NotInQuota;
import static io.slipstream.scheduler.Builders.aRun;
import static org.assertj.core.api.Assertions.assertThat;

import io.slipstream.api.run.RunId;
import io.slipstream.api.spec.IdleMode;
import io.slipstream.api.spec.Resources;
import java.util.List;
import org.junit.jupiter.api.Test;

/** A quota's borrowers as preemption for fairness searches them: grouped by what each holds, as they are indexed. */
class QuotaBorrowersTest {
    private static QuotaBorrowers.Borrowed borrower(String name, int cpu, int gpus) {
        ActiveRun run = aRun(name).quota("b/gpu").idle(IdleMode.Acceptable).gpus(gpus).cpu(cpu).running(NotInQuota, 0, "n-1");
        return new QuotaBorrowers.Borrowed(run, ClusterState.total(run));
    }

    @Test
    void groupsByAmountInTheOrderFirstSeenAndKeepsTheLeastOfEachResource() {
        QuotaBorrowers of = new QuotaBorrowers();
        of.add(borrower("r-3", 8, 2));
        of.add(borrower("r-1", 4, 1));
        of.add(borrower("r-2", 8, 2));
        of.add(borrower("r-4", 2, 4));
        assertThat(of.first).isEqualTo(new RunId("r-1"));
        assertThat(of.amounts).extracting(Resources::gpu).containsExactly(2, 1, 4);
        assertThat(of.byAmount).extracting(runs -> runs.stream().map(b -> b.run().id().toString()).toList())
                .containsExactly(List.of("r-3", "r-2"), List.of("r-1"), List.of("r-4"));
        // The least per resource, not the amount of the smallest run: 2 cpu (r-4's), 1 GPU (r-1's).
        assertThat(of.leastMilliCpu).isEqualTo(2_000);
        assertThat(of.leastGpu).isEqualTo(1);
        assertThat(of.runs).hasSize(4);
    }

    @Test
    void moreThanThirtyTwoAmountsMakeNoGroupsButKeepEveryRunAndTheLeast() {
        QuotaBorrowers of = new QuotaBorrowers();
        for (int i = 1; i <= QuotaBorrowers.GROUPS; i++) {
            of.add(borrower("r-" + i, i, 1));
        }
        assertThat(of.byAmount).hasSize(QuotaBorrowers.GROUPS);
        of.add(borrower("r-x", 1, 1)); // an amount seen: still grouped
        assertThat(of.byAmount.get(0)).hasSize(2);
        of.add(borrower("r-y", 99, 1)); // the 33rd amount
        of.add(borrower("r-z", 100, 1));
        assertThat(of.byAmount).isNull();
        assertThat(of.amounts).isNull();
        assertThat(of.runs).hasSize(QuotaBorrowers.GROUPS + 3);
        assertThat(of.leastMilliCpu).isEqualTo(1_000);
    }
}
