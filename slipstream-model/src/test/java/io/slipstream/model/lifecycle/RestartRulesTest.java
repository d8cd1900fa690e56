package io.slipstream.model.lifecycle;

import static org.assertj.core.api.Assertions.assertThat;

import io.slipstream.api.run.EndCause;
import io.slipstream.api.spec.FaultTolerance;
import io.slipstream.model.FaultState;
import io.slipstream.model.LaunchFailure;
import java.time.Duration;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

class RestartRulesTest {
    private static FaultTolerance retrying(List<FaultTolerance.ExitCodeRange> codes, List<String> patterns, FaultTolerance.FailureAction other) {
        return retrying(codes, patterns, List.of(), other, 0);
    }

    private static FaultTolerance retrying(List<FaultTolerance.ExitCodeRange> codes, List<String> patterns, List<EndCause> reasons,
                                           FaultTolerance.FailureAction other, int sameErrorLimit) {
        return new FaultTolerance(FaultTolerance.RunType.Sync, 3, null, 2, 2, Duration.ofSeconds(10), Duration.ofMinutes(1), codes, patterns,
                reasons, other, sameErrorLimit, null, null);
    }

    private static RestartRules.InstanceFailed failed(int code, EndCause cause, String detail) {
        return new RestartRules.InstanceFailed("w-0", code, cause, detail, null, List.of());
    }

    private static final List<FaultTolerance.ExitCodeRange> KILLED = List.of(new FaultTolerance.ExitCodeRange(137, 137));
    private static final String OOM = "OOMKilled: used more memory than its limit (exit code 137)";

    /** A failure, a policy, and what the rules make of it: the rule that matched ({@code null}: none) and the verdict. */
    record ReasonRow(String name, FaultTolerance policy, RestartRules.InstanceFailed failure, String rule, boolean restart, String reason) {
        @Override
        public String toString() {
            return name;
        }
    }

    static Stream<ReasonRow> reasonRows() {
        List<EndCause> oom = List.of(EndCause.OOMKilled);
        FaultTolerance.FailureAction fail = FaultTolerance.FailureAction.Fail;
        return Stream.of(
                new ReasonRow("an OOM kill with retryOn.reasons OOMKilled restarts", retrying(List.of(), List.of(), oom, fail, 0),
                        failed(137, EndCause.OOMKilled, OOM), "retryOn.reasons OOMKilled", true,
                        "InstanceFailed: w-0 (" + OOM + ") (retryOn.reasons OOMKilled); restarting in 10s"),
                new ReasonRow("an OOM kill without the rule fails, with the cause in the reason", retrying(List.of(), List.of(), fail),
                        failed(137, EndCause.OOMKilled, OOM), null, false, "InstanceFailed: w-0 (" + OOM + ")"),
                new ReasonRow("a plain SIGKILL is no OOM kill", retrying(List.of(), List.of(), oom, fail, 0),
                        failed(137, null, "Exited with code 137"), null, false,
                        "InstanceFailed: w-0 (Exited with code 137); no retry rule matches"),
                new ReasonRow("the cause is named before an exit code rule that matches too", retrying(KILLED, List.of(), oom, fail, 0),
                        failed(137, EndCause.OOMKilled, OOM), "retryOn.reasons OOMKilled", true,
                        "InstanceFailed: w-0 (" + OOM + ") (retryOn.reasons OOMKilled); restarting in 10s"),
                new ReasonRow("an exit code rule still retries an OOM kill", retrying(KILLED, List.of(), List.of(), fail, 0),
                        failed(137, EndCause.OOMKilled, OOM), "retryOn.exitCodes 137", true,
                        "InstanceFailed: w-0 (" + OOM + ") (retryOn.exitCodes 137); restarting in 10s"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("reasonRows")
    void retryOnReasonsMatchTheEndCause(ReasonRow row) {
        assertThat(RestartRules.matchingRule(row.policy(), row.failure())).isEqualTo(row.rule());
        RestartRules.Verdict verdict = RestartRules.judge(row.policy(), FaultState.NONE, row.failure());
        assertThat(verdict.restart()).isEqualTo(row.restart());
        assertThat(verdict.reason()).isEqualTo(row.reason());
    }

    @Test
    void theSameErrorIsTheSameExitCodeWithTheSameCause() {
        FaultTolerance policy = retrying(KILLED, List.of(), List.of(EndCause.OOMKilled), FaultTolerance.FailureAction.Fail, 2);
        var first = RestartRules.judge(policy, FaultState.NONE, failed(137, EndCause.OOMKilled, OOM));
        assertThat(first.faults().lastError()).isEqualTo("exit code 137 (OOMKilled), retryOn.reasons OOMKilled");
        var killed = RestartRules.judge(policy, first.faults(), failed(137, null, "Exited with code 137"));
        assertThat(killed.restart()).as("a plain SIGKILL after an OOM kill is another error").isTrue();
        assertThat(killed.faults().lastError()).isEqualTo("exit code 137, retryOn.exitCodes 137");
        assertThat(killed.faults().sameErrorCount()).isEqualTo(1);
        var again = RestartRules.judge(policy, RestartRules.judge(policy, killed.faults(), failed(137, EndCause.OOMKilled, OOM)).faults(),
                failed(137, EndCause.OOMKilled, OOM));
        assertThat(again.restart()).isFalse();
        assertThat(again.reason()).startsWith("SameErrorRepeated: exit code 137 (OOMKilled), retryOn.reasons OOMKilled happened 2 times in a row");
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
