package io.slipstream.executor.slurm;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.api.Test;

/** What squeue says of jobs, and what of it counts. */
class JobStateTest {
    private static final String QUEUE = """
            c0ffee|12|PENDING|Resources|slipstream.run-a.1.0.0
            c0ffee|13|RUNNING|None|slipstream.run-a.1.1.0
            c0ffee|14|COMPLETING|None|slipstream.run-b.1.0.0
            c0ffee|15|COMPLETED|None|slipstream.run-b.1.1.0
            c0ffee|16|NODE_FAIL|None|slipstream.run-c.1.0.0
            c0ffee|17|CANCELLED|None|slipstream.run-a.1.0.0
            not a line
            """;
    private static final String MARK = "c0ffee";

    @Test
    void eachJobsStateByItsId() {
        Map<String, JobState> states = JobState.parseAll(QUEUE, MARK);
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

    /** Any account names its jobs: a name that holds a newline and then a line of another job's is no line of the reading. */
    @Test
    void whatAJobsNameHoldsAfterANewlineIsNoLineOfTheQueue() {
        String queue = MARK + "|13|RUNNING|None|slipstream.run-a.1.1.0\n" + MARK + "|40|RUNNING|None|x\n13|COMPLETED|None|slipstream.run-a.1.1.0\n"
                + "c0ffef|13|COMPLETED|None|slipstream.run-a.1.1.0\n";
        assertThat(JobState.parseAll(queue, MARK)).containsOnlyKeys("13", "40");
        assertThat(JobState.parseAll(queue, MARK).get("13").live()).isTrue();
        assertThat(JobState.liveJobsNamed("40|RUNNING|None|slipstream.run-a.1.1.0\n", MARK, "slipstream.run-a.1.1.0")).isEmpty();
        assertThat(JobState.mark()).matches("[0-9a-f]{24}").isNotEqualTo(JobState.mark());
        assertThat(JobState.format(MARK)).isEqualTo("c0ffee|%i|%T|%r|%j");
    }

    @Test
    void onlyJobsThatMayStillRunAreFoundByName() {
        assertThat(JobState.liveJobsNamed(QUEUE, MARK, "slipstream.run-a.1.0.0")).containsExactly("12");
        assertThat(JobState.liveJobsNamed(QUEUE, MARK, "slipstream.run-b.1.1.0")).isEmpty();
    }
}
