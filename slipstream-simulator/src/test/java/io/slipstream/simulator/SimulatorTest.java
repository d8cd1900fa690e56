package io.slipstream.simulator;

import static org.assertj.core.api.Assertions.assertThat;

import io.slipstream.api.spec.IdleMode;
import io.slipstream.simulator.engine.AdmissibleQueueTest;
import io.slipstream.simulator.input.ClusterSpec;
import io.slipstream.simulator.input.Experiment;
import io.slipstream.simulator.input.NodePool;
import io.slipstream.simulator.input.Policy;
import io.slipstream.simulator.report.PolicyResult;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class SimulatorTest {
    @Test
    void policiesReplayedInParallelGiveWhatTheyGiveOneAfterTheOtherInPolicyOrder() {
        List<Policy> policies = new ArrayList<>();
        for (IdleMode mode : new IdleMode[] {IdleMode.Disabled, IdleMode.Acceptable, null, IdleMode.OnlyIdle}) {
            policies.add(new Policy("p-" + mode, AdmissibleQueueTest.quotas(), "test", mode, Duration.ofSeconds(30), Duration.ofMinutes(10),
                    Duration.ofSeconds(20), mode == null, Duration.ofSeconds(15), Duration.ofSeconds(10), Duration.ofHours(4)));
        }
        Experiment experiment = new Experiment("parallel", 3, AdmissibleQueueTest.randomTrace(3, 300),
                new ClusterSpec(List.of(new NodePool("n", 6, 8, "gpu", 96_000, 1L << 40))), policies, List.of());

        List<PolicyResult> serial = Simulator.run(experiment, Set.of(), null, 1);
        List<PolicyResult> parallel = Simulator.run(experiment, Set.of(), null, 3);

        assertThat(parallel).extracting(r -> r.policy().name()).containsExactly("p-Disabled", "p-Acceptable", "p-null", "p-OnlyIdle");
        Fingerprint.assertSame(parallel, serial);
    }
}
