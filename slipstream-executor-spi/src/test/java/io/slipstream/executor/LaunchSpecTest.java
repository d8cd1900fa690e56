package io.slipstream.executor;

import static org.assertj.core.api.Assertions.assertThat;

import io.slipstream.api.run.InstanceId;
import io.slipstream.api.run.RunId;
import io.slipstream.api.spec.Resources;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class LaunchSpecTest {
    private static final LaunchSpec SPEC = new LaunchSpec(new InstanceId(new RunId("r"), 1, 0), "main-0", "node-1", List.of(), List.of("true"),
            Map.of(), null, null, null, null, new Resources(1000, 1L << 30, 0, null));

    @Test
    void theMemoryLimitIsTheRequestUnlessTheGroupsLimitIsAbove() {
        assertThat(SPEC.memoryLimit()).as("no limit given: the request").isEqualTo(1L << 30);
        assertThat(SPEC.withMemoryLimit(4L << 30).memoryLimit()).isEqualTo(4L << 30);
        assertThat(SPEC.withMemoryLimit(1L << 20).memoryLimit()).as("never below what the scheduler counted").isEqualTo(1L << 30);
        LaunchSpec unsized = new LaunchSpec(SPEC.id(), "main-0", "node-1", List.of(), List.of("true"), Map.of(), null, null);
        assertThat(unsized.memoryLimit()).as("no resources: none known").isZero();
    }

    @Test
    void everyCopyKeepsTheMemoryLimit() {
        LaunchSpec burstable = SPEC.withMemoryLimit(4L << 30);
        for (LaunchSpec copy : List.of(burstable.withRestart(2), burstable.withBorrowed(true), burstable.withSecrets(Map.of(), List.of()),
                burstable.withNetwork(io.slipstream.api.spec.NetworkMode.Private))) {
            assertThat(copy.memoryLimitBytes()).as(copy.toString()).isEqualTo(4L << 30);
        }
        assertThat(burstable.toString()).contains("memoryLimit=4294967296");
    }
}
