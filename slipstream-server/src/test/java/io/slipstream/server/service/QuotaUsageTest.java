package io.slipstream.server.service;

import static io.slipstream.model.testing.Runs.aRun;
import static io.slipstream.testing.JobBuilder.aJob;
import static org.assertj.core.api.Assertions.assertThat;

import io.slipstream.model.FaultState;
import io.slipstream.model.RunRecord;
import io.slipstream.model.testing.Runs;
import io.slipstream.store.Store;
import io.slipstream.store.memory.InMemoryStore;
import java.time.Instant;
import org.junit.jupiter.api.Test;

class QuotaUsageTest {
    private static final Instant T0 = Instant.parse("2026-11-29T10:00:00Z");

    private static void run(Store store, String workspace, String quota, int preemptions, FaultState faults, int index) {
        RunRecord queued = aRun().workspace(workspace).spec(aJob("job").workspace(workspace).quota(quota)).createdAt(T0.plusSeconds(index)).build();
        RunRecord created = store.write(tx -> tx.createRun(queued, Runs.created(queued)));
        RunRecord withFaults = created.withFaults(faults);
        for (int i = 0; i < preemptions; i++) {
            withFaults = withFaults.admitted(io.slipstream.api.run.RealTimeResources.InQuota, "Admitted", T0).preempting(null, "test")
                    .requeued("Preempted", T0);
        }
        RunRecord stored = withFaults;
        store.write(tx -> tx.updateRun(stored));
    }

    @Test
    void sumsWhatTheQuotasRunsWentThrough() {
        try (Store store = new InMemoryStore()) { // a pure read of the store: no database needed
            run(store, "team-a", "gpus", 2, new FaultState(1, 0, 1, 0, null, 0, null, null, null, null, null, null, 1500), 1);
            run(store, "team-a", "gpus", 0, new FaultState(0, 1, 0, 0, null, 0, null, null, null, null, null, null, 500), 2);
            run(store, "team-a", "other", 5, new FaultState(3, 3, 3, 0, null, 0, null, null, null, null, null, null, 99_000), 3);
            run(store, "team-b", "gpus", 5, new FaultState(3, 3, 3, 0, null, 0, null, null, null, null, null, null, 99_000), 4);

            var status = QuotaUsage.of(store, "team-a", "gpus");
            assertThat(status.get("runs").asLong()).isEqualTo(2);
            assertThat(status.get("preemptions").asLong()).isEqualTo(2);
            assertThat(status.get("restarts").get("failures").asLong()).isEqualTo(1);
            assertThat(status.get("restarts").get("nodeLost").asLong()).isEqualTo(1);
            assertThat(status.get("restarts").get("hangs").asLong()).isEqualTo(1);
            assertThat(status.get("workLostSeconds").asDouble()).isEqualTo(2.0);
        }
    }
}
