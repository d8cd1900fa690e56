package io.slipstream.server.control;

import static io.slipstream.model.testing.Runs.T0;
import static io.slipstream.model.testing.Runs.aRun;
import static org.assertj.core.api.Assertions.assertThat;

import io.slipstream.api.run.RealTimeResources;
import io.slipstream.api.run.RunState;
import io.slipstream.model.FaultState;
import io.slipstream.model.RunRecord;
import java.time.Instant;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Which runs the scheduler is shown: the backoff is the cycle's input, decided here, never by the scheduler. */
class BackoffGateTest {
    private static final Instant NOW = T0.plusSeconds(600);

    static Stream<Arguments> cases() {
        return Stream.of(
                Arguments.of("queued, never restarted", queued(null), true),
                Arguments.of("queued, backoff over", queued(NOW.minusSeconds(1)), true),
                Arguments.of("queued, backoff ends now", queued(NOW), true),
                Arguments.of("queued, backoff ahead", queued(NOW.plusSeconds(30)), false),
                Arguments.of("running, a retryAt left from its start", aRun("r").admitted(RealTimeResources.InQuota, T0).running(T0)
                        .faults(FaultState.NONE.restarted(NOW.plusSeconds(30))).build(), true));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void aRunIsShownToTheSchedulerUnlessItIsQueuedInsideItsBackoff(String name, RunRecord run, boolean shown) {
        BackoffGate gate = BackoffGate.of(List.of(run), NOW);

        assertThat(gate.ready().contains(run)).isEqualTo(shown);
        assertThat(gate.backingOff().containsKey(run.id())).isEqualTo(!shown);
        if (!shown) {
            assertThat(gate.backingOff().get(run.id()).reason()).isEqualTo("BackingOff");
            assertThat(gate.backingOff().get(run.id()).message()).contains(run.faults().retryAt().toString());
        }
    }

    private static RunRecord queued(Instant retryAt) {
        RunRecord run = aRun("q").build();
        assertThat(run.state()).isEqualTo(RunState.QUEUED);
        return retryAt == null ? run : run.withFaults(FaultState.NONE.restarted(retryAt));
    }
}
