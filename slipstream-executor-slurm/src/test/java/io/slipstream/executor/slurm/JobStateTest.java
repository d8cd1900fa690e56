package io.slipstream.executor.slurm;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.api.Test;

/** What squeue says of jobs, and what of it counts. */
class JobStateTest {
    private static final String QUEUE = """
            12|PENDING|Resources|slipstream.run-a.1.0.0
            13|RUNNING|None|slipstream.run-a.1.1.0
            14|COMPLETING|None|slipstream.run-b.1.0.0
            15|COMPLETED|None|slipstream.run-b.1.1.0
            16|NODE_FAIL|None|slipstream.run-c.1.0.0
            17|CANCELLED|None|slipstream.run-a.1.0.0
            not a line
            """;

    @Test
    void eachJobsStateByItsId() {
        Map<String, JobState> states = JobState.parseAll(QUEUE);
        assertThat(states).hasSize(6);
        assertThat(states.get("12")).satisfies(state -> {
            assertThat(state.waiting()).isTrue();
            assertThat(state.live()).isTrue();
            assertThat(state.running()).isFalse();
            assertThat(state).hasToString("PENDING (Resources)");
        });
        assertThat(states.get("13").running()).isTrue();
        assertThat(states.get("14").live()).as("COMPLETING: processes may be left").isTrue();
        assertThat(states.get("15").live()).isFalse();
        assertThat(states.get("16").nodeFailed()).isTrue();
        assertThat(states.get("16").live()).isFalse();
    }

    @Test
    void onlyJobsThatMayStillRunAreFoundByName() {
        assertThat(JobState.liveJobsNamed(QUEUE, "slipstream.run-a.1.0.0")).containsExactly("12");
        assertThat(JobState.liveJobsNamed(QUEUE, "slipstream.run-b.1.1.0")).isEmpty();
    }
}
