package io.slipstream.model;

import static org.assertj.core.api.Assertions.assertThat;

import io.slipstream.api.codec.Json;
import org.junit.jupiter.api.Test;

/** Runs stored before preemptions moved into FaultState have JSON without it: the store must still read them. */
class FaultStateJsonTest {
    @Test
    void faultsStoredBeforePreemptionsMovedInAreRead() throws Exception {
        String stored = "{\"failures\":1,\"nodeLost\":0,\"hangs\":2,\"lastError\":\"exit 3\",\"sameErrorCount\":1,"
                + "\"retryAt\":\"2026-01-01T00:00:00Z\",\"workLostMillis\":1500}";
        FaultState faults = Json.mapper().readValue(stored, FaultState.class);
        assertThat(faults.failures()).isEqualTo(1);
        assertThat(faults.hangs()).isEqualTo(2);
        assertThat(faults.preemptions()).isZero();
        assertThat(faults.withPreemptionsAtLeast(3).preemptions()).isEqualTo(3);
    }
}
