package io.slipstream.model.lifecycle;

import static org.assertj.core.api.Assertions.assertThat;

import io.slipstream.api.spec.FaultTolerance;
import io.slipstream.model.FaultState;
import io.slipstream.model.LaunchFailure;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class RestartRulesTest {
    private static FaultTolerance retrying(List<FaultTolerance.ExitCodeRange> codes, List<String> patterns, FaultTolerance.FailureAction other) {
        return new FaultTolerance(FaultTolerance.RunType.Sync, 3, null, 2, 2, Duration.ofSeconds(10), Duration.ofMinutes(1), codes, patterns,
                other, 0, null, null);
    }

    @Test
    void exitCodeRangesAndPatternsMakeAFailureRetryable() {
        FaultTolerance policy = retrying(List.of(new FaultTolerance.ExitCodeRange(128, 255)), List.of("CUDA error: an illegal memory access"),
                FaultTolerance.FailureAction.Fail);
        var killed = RestartRules.judge(policy, FaultState.NONE, new RestartRules.InstanceFailed("w-0", 137, "Exited with code 137", List.of()));
        assertThat(killed.restart()).isTrue();
        assertThat(((RestartRules.Restart) killed).cause()).isEqualTo(FaultState.RestartCause.FAILURE);
        assertThat(((RestartRules.Restart) killed).backoff()).isEqualTo(Duration.ofSeconds(10));
        assertThat(killed.faults().lastError()).isEqualTo("exit code 137, retryOn.exitCodes 128-255");

        var cuda = RestartRules.judge(policy, FaultState.NONE, new RestartRules.InstanceFailed("w-0", 1, "Exited with code 1",
                List.of("loading", "RuntimeError: CUDA error: an illegal memory access was encountered")));
        assertThat(cuda.restart()).isTrue();
        assertThat(cuda.reason()).contains("retryOn.errorPatterns 'CUDA error: an illegal memory access'");

        var other = RestartRules.judge(policy, FaultState.NONE, new RestartRules.InstanceFailed("w-0", 2, "Exited with code 2", List.of("bad")));
        assertThat(other.restart()).isFalse();
        assertThat(other.reason()).isEqualTo("InstanceFailed: w-0 (Exited with code 2); no retry rule matches");

        var launch = RestartRules.judge(retrying(List.of(), List.of(), FaultTolerance.FailureAction.Retry), FaultState.NONE,
                new RestartRules.InstanceFailed("w-0", null, "LaunchFailed: no such file", List.of()));
        assertThat(launch.restart()).as("otherFailures: Retry").isTrue();

        var noSecret = RestartRules.judge(retrying(List.of(), List.of(), FaultTolerance.FailureAction.Retry), FaultState.NONE,
                new RestartRules.InstanceFailed("w-0", null, "SecretUnavailable: secret team-a/hf does not exist any more",
                        LaunchFailure.SECRETS_UNAVAILABLE, List.of()));
        assertThat(noSecret.restart()).as("a restart would fail the same way").isFalse();
        assertThat(noSecret.reason()).startsWith("SecretUnavailable: secret team-a/hf does not exist any more");
    }

    @Test
    void aPatternThatBacktracksWithoutEndMatchesNothingOnceItsReadingBudgetIsSpent() {
        // Unbounded, (a+)+b over 4000 a's would run for ages; the budget of reads ends it, the same way every time.
        FaultTolerance policy = retrying(List.of(), List.of("(a+)+b", "ends here"), FaultTolerance.FailureAction.Fail);
        String evil = "a".repeat(4000);
        var verdict = RestartRules.judge(policy, FaultState.NONE,
                new RestartRules.InstanceFailed("w-0", 1, "Exited with code 1", List.of(evil, "it ends here")));
        assertThat(verdict.restart()).as("the budget is spent: later patterns are not tried either").isFalse();

        var honest = RestartRules.judge(policy, FaultState.NONE,
                new RestartRules.InstanceFailed("w-0", 1, "Exited with code 1", List.of("a".repeat(20) + "b")));
        assertThat(honest.restart()).as("a line the pattern matches within the budget").isTrue();
    }

    @Test
    void backoffDoublesPerRestartOfItsCauseAndPreemptionsAndLostNodesWaitNone() {
        FaultTolerance policy = retrying(List.of(), List.of(), FaultTolerance.FailureAction.Retry);
        FaultState twoFailures = new FaultState(2, 0, 0, 0, null, 0, null, null, null, null, null, null, 0);
        assertThat(RestartRules.backoff(policy, FaultState.NONE, FaultState.RestartCause.FAILURE)).isEqualTo(Duration.ofSeconds(10));
        assertThat(RestartRules.backoff(policy, twoFailures, FaultState.RestartCause.FAILURE)).isEqualTo(Duration.ofSeconds(40));
        assertThat(RestartRules.backoff(policy, twoFailures, FaultState.RestartCause.HANG)).as("counted per cause").isEqualTo(Duration.ofSeconds(10));
        assertThat(RestartRules.backoff(policy, twoFailures, FaultState.RestartCause.PREEMPTION)).isZero();
        assertThat(RestartRules.backoff(policy, twoFailures, FaultState.RestartCause.NODE_LOST)).isZero();
    }

    @Test
    void lostNodesAndHangsHaveBudgetsOfTheirOwn() {
        FaultTolerance policy = retrying(List.of(), List.of(), FaultTolerance.FailureAction.Fail);
        FaultState twoLost = new FaultState(0, 2, 0, 0, null, 0, null, null, null, null, null, null, 0);
        var lost = RestartRules.judge(policy, twoLost, new RestartRules.NodeLost("w-1", "NodeLost: node node-2 is down"));
        assertThat(lost.restart()).isFalse();
        assertThat(lost.reason()).startsWith("NodeLostBudgetExhausted: restarted 2 time(s) for lost nodes (faultTolerance.maxNodeLostRestarts: 2)");
        var hang = RestartRules.judge(policy, twoLost, new RestartRules.Hung("no output for 30m"));
        assertThat(hang.restart()).isTrue();
        assertThat(((RestartRules.Restart) hang).cause()).isEqualTo(FaultState.RestartCause.HANG);
    }
}
