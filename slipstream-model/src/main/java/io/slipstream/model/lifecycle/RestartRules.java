package io.slipstream.model.lifecycle;

import io.slipstream.api.run.EndCause;
import io.slipstream.api.spec.Durations;
import io.slipstream.api.spec.FaultTolerance;
import io.slipstream.model.FaultState;
import io.slipstream.model.FaultState.RestartCause;
import io.slipstream.model.LaunchFailure;

import java.time.Duration;
import java.util.List;
import java.util.regex.Pattern;

/**
 * Decides, from a job's {@link FaultTolerance} policy and what its run has been through, whether a fault restarts the
 * run or ends it, and how long a restart waits: every restart budget and backoff is here. Pure: the caller gathers
 * the facts (exit code, log lines) and applies the verdict.
 */
public final class RestartRules {
    /**
     * Longest line looked at, and how many characters all pattern matching of one failure may read (patterns come
     * from users: one that backtracks without end stops there, in about a tenth of a second).
     */
    private static final int MAX_LINE = 4096;
    static final long MATCH_BUDGET = 20_000_000;

    private RestartRules() {
    }

    /** What happened. */
    public sealed interface Fault permits InstanceFailed, NodeLost, Hung {
    }

    /**
     * An instance failed: {@code exitCode} ({@code null}: it has none, e.g. it could not be launched), {@code cause} why
     * it ended where its executor knew ({@code OOMKilled}; {@code null}: it did not), {@code detail} what the platform
     * recorded, {@code launchFailure} why it could not be launched ({@code null}: it was), {@code logLines} the last
     * lines of its output.
     */
    public record InstanceFailed(String instance, Integer exitCode, EndCause cause, String detail, LaunchFailure launchFailure,
                                 List<String> logLines) implements Fault {
        public InstanceFailed {
            logLines = List.copyOf(logLines);
        }

        public InstanceFailed(String instance, Integer exitCode, String detail, LaunchFailure launchFailure, List<String> logLines) {
            this(instance, exitCode, null, detail, launchFailure, logLines);
        }

        public InstanceFailed(String instance, Integer exitCode, String detail, List<String> logLines) {
            this(instance, exitCode, null, detail, null, logLines);
        }

        /**
         * What makes two failures the same error ({@code sameErrorLimit}): the exit code and its cause (an OOM kill is not
         * any other SIGKILL), or the detail where there is no code.
         */
        String signature() {
            return exitCode == null ? detail : "exit code " + exitCode + (cause == null ? "" : " (" + cause + ")");
        }
    }

    /** An instance's node was lost (declared down, or it stopped answering). */
    public record NodeLost(String instance, String why) implements Fault {
    }

    /** No output and no progress for too long, or the others did not exit after one succeeded. */
    public record Hung(String why) implements Fault {
    }

    /** What to do: restart, or fail; {@code faults} is the run's updated record, {@code reason} says why. */
    public sealed interface Verdict permits Restart, Fail {
        String reason();

        FaultState faults();

        default boolean restart() {
            return this instanceof Restart;
        }
    }

    /** A new attempt of the whole gang, for {@code cause}, after {@code backoff}. */
    public record Restart(RestartCause cause, Duration backoff, String reason, FaultState faults) implements Verdict {
    }

    /** The run fails. */
    public record Fail(String reason, FaultState faults) implements Verdict {
    }

    /**
     * How long the next attempt waits after a restart for {@code cause}: the policy's exponential backoff for
     * failures and hangs, counted by restarts of that cause so far; none after a preemption or a lost node.
     */
    public static Duration backoff(FaultTolerance policy, FaultState faults, RestartCause cause) {
        return switch (cause) {
            case FAILURE -> policy.backoff(faults.failures() + 1);
            case HANG -> policy.backoff(faults.hangs() + 1);
            case PREEMPTION, NODE_LOST -> Duration.ZERO;
        };
    }

    /**
     * Why a run preempted {@code preemptions} times before this one fails instead of being queued again
     * ({@code faultTolerance.maxPreemptions}), or {@code null} if it is queued again; {@code last} says why it stopped.
     */
    public static String preemptionBudgetExhausted(FaultTolerance policy, int preemptions, String last) {
        if (policy.maxPreemptions() == null || preemptions < policy.maxPreemptions()) {
            return null;
        }
        return "PreemptionBudgetExhausted: preempted " + preemptions + " time(s) before (faultTolerance.maxPreemptions: "
                + policy.maxPreemptions() + "); last: " + last;
    }

    public static Verdict judge(FaultTolerance policy, FaultState faults, Fault fault) {
        if (fault instanceof NodeLost lost) {
            String what = "NodeLost: " + lost.instance() + " (" + lost.why() + ")";
            if (faults.nodeLost() >= policy.maxNodeLost()) {
                return fail("NodeLostBudgetExhausted: " + budget(faults.nodeLost(), policy.maxNodeLost(), "lost nodes", "maxNodeLostRestarts") + "; last: " + what, faults);
            }
            return new Restart(RestartCause.NODE_LOST, Duration.ZERO, what + "; restarting elsewhere", faults);
        }
        if (fault instanceof Hung hung) {
            String what = "Hung: " + hung.why();
            if (faults.hangs() >= policy.maxHangs()) {
                return fail("HangBudgetExhausted: " + budget(faults.hangs(), policy.maxHangs(), "hangs", "maxHangRestarts") + "; last: " + what, faults);
            }
            Duration backoff = backoff(policy, faults, RestartCause.HANG);
            return new Restart(RestartCause.HANG, backoff, what + "; restarting" + after(backoff), faults);
        }
        InstanceFailed failed = (InstanceFailed) fault;
        String what = failed.instance() + " (" + failed.detail() + ")";
        if (failed.launchFailure() != null && failed.launchFailure().repeats()) {
            return fail(failed.detail() + "; a restart would fail the same way", faults); // nothing ran: no budget to spend
        }
        String rule = matchingRule(policy, failed);
        if (rule == null && policy.otherFailures() == FaultTolerance.FailureAction.Fail) {
            String hint = policy.hasRetryRules() ? "; no retry rule matches" : "";
            return fail("InstanceFailed: " + what + hint, faults);
        }
        String signature = failed.signature() + (rule == null ? "" : ", " + rule);
        FaultState counted = faults.failedWith(signature);
        if (policy.sameErrorLimit() > 0 && counted.sameErrorCount() >= policy.sameErrorLimit()) {
            return fail("SameErrorRepeated: " + signature + " happened " + counted.sameErrorCount() + " times in a row; last: " + what, counted);
        }
        if (faults.failures() >= policy.maxRestarts()) {
            return fail("RestartBudgetExhausted: " + budget(faults.failures(), policy.maxRestarts(), "failures", "maxRestarts") + "; last: " + what
                    + (rule == null ? "" : " (" + rule + ")"), counted);
        }
        Duration backoff = backoff(policy, faults, RestartCause.FAILURE);
        return new Restart(RestartCause.FAILURE, backoff,
                "InstanceFailed: " + what + (rule == null ? "" : " (" + rule + ")") + "; restarting" + after(backoff), counted);
    }

    /**
     * The first rule that makes this failure retryable, described, or {@code null}: its cause first (the most specific
     * fact), then its exit code, then its log.
     */
    static String matchingRule(FaultTolerance policy, InstanceFailed failed) {
        if (failed.cause() != null && policy.retryReasons().contains(failed.cause())) {
            return "retryOn.reasons " + failed.cause();
        }
        for (FaultTolerance.ExitCodeRange range : policy.retryExitCodes()) {
            if (failed.exitCode() != null && range.contains(failed.exitCode())) {
                return "retryOn.exitCodes " + range;
            }
        }
        Deadlined.Budget budget = new Deadlined.Budget(MATCH_BUDGET);
        for (String regex : policy.retryPatterns()) {
            Pattern pattern = Pattern.compile(regex);
            for (String line : failed.logLines()) {
                String text = line.length() > MAX_LINE ? line.substring(0, MAX_LINE) : line;
                try {
                    if (pattern.matcher(new Deadlined(text, budget)).find()) {
                        return "retryOn.errorPatterns '" + regex + "'";
                    }
                } catch (Deadlined.Expired e) {
                    return null; // a pattern that backtracks without end matches nothing, and holds up nothing
                }
            }
        }
        return null;
    }

    private static Verdict fail(String why, FaultState faults) {
        return new Fail(why, faults);
    }

    private static String budget(int used, int max, String what, String field) {
        return "restarted " + used + " time(s) for " + what + " (faultTolerance." + field + ": " + max + ")";
    }

    private static String after(Duration backoff) {
        return backoff.isZero() ? "" : " in " + Durations.format(backoff);
    }

    /** Text that stops being readable once a budget of reads is spent, so that a runaway regular expression ends. */
    private record Deadlined(CharSequence text, Budget budget) implements CharSequence {
        static final class Expired extends RuntimeException {
            Expired() {
                super(null, null, false, false);
            }
        }

        /** Characters left to read, shared by every line and pattern of one judgement. */
        static final class Budget {
            private long left;

            Budget(long reads) {
                left = reads;
            }
        }

        @Override
        public char charAt(int index) {
            if (--budget.left < 0) {
                throw new Expired();
            }
            return text.charAt(index);
        }

        @Override
        public int length() {
            return text.length();
        }

        @Override
        public CharSequence subSequence(int start, int end) {
            return new Deadlined(text.subSequence(start, end), budget);
        }

        @Override
        public String toString() {
            return text.toString();
        }
    }
}
