package io.slipstream.server.control;

import io.slipstream.api.spec.Durations;
import io.slipstream.api.spec.FaultTolerance;
import io.slipstream.model.FaultState;
import io.slipstream.model.FaultState.RestartCause;
import java.time.Duration;
import java.util.List;
import java.util.regex.Pattern;

/**
 * Decides, from a job's {@link FaultTolerance} policy and what its run has been through, whether a fault restarts the
 * run or ends it. Pure: the caller gathers the facts (exit code, log lines) and applies the verdict.
 */
final class RestartRules {
    /** Longest line looked at, and how long all pattern matching of one failure may take (patterns come from users). */
    private static final int MAX_LINE = 4096;
    private static final Duration MATCH_BUDGET = Duration.ofMillis(200);

    private RestartRules() {
    }

    /** What happened. */
    sealed interface Fault permits InstanceFailed, NodeLost, Hung {
    }

    /**
     * An instance failed: {@code exitCode} ({@code null}: it has none, e.g. it could not be launched), {@code detail}
     * what the platform recorded, {@code logLines} the last lines of its output.
     */
    record InstanceFailed(String instance, Integer exitCode, String detail, List<String> logLines) implements Fault {
    }

    /** An instance's node was lost (declared down, or it stopped answering). */
    record NodeLost(String instance, String why) implements Fault {
    }

    /** No output and no progress for too long, or the others did not exit after one succeeded. */
    record Hung(String why) implements Fault {
    }

    /** What to do: restart for {@code cause} after {@code backoff}, or fail; {@code faults} is the run's updated record. */
    record Verdict(boolean restart, RestartCause cause, Duration backoff, String reason, FaultState faults) {
    }

    static Verdict judge(FaultTolerance policy, FaultState faults, Fault fault) {
        if (fault instanceof NodeLost lost) {
            String what = "NodeLost: " + lost.instance() + " (" + lost.why() + ")";
            if (faults.nodeLost() >= policy.maxNodeLost()) {
                return fail("NodeLostBudgetExhausted: " + budget(faults.nodeLost(), policy.maxNodeLost(), "lost nodes", "maxNodeLostRestarts") + "; last: " + what, faults);
            }
            return new Verdict(true, RestartCause.NODE_LOST, Duration.ZERO, what + "; restarting elsewhere", faults);
        }
        if (fault instanceof Hung hung) {
            String what = "Hung: " + hung.why();
            if (faults.hangs() >= policy.maxHangs()) {
                return fail("HangBudgetExhausted: " + budget(faults.hangs(), policy.maxHangs(), "hangs", "maxHangRestarts") + "; last: " + what, faults);
            }
            Duration backoff = policy.backoff(faults.hangs() + 1);
            return new Verdict(true, RestartCause.HANG, backoff, what + "; restarting" + after(backoff), faults);
        }
        InstanceFailed failed = (InstanceFailed) fault;
        String what = failed.instance() + " (" + failed.detail() + ")";
        if (failed.exitCode() == null && failed.detail() != null && failed.detail().startsWith(LaunchSecrets.Unavailable.REASON + ":")) {
            return fail(failed.detail() + "; a restart would fail the same way", faults); // nothing ran: no budget to spend
        }
        String rule = matchingRule(policy, failed);
        if (rule == null && policy.otherFailures() == FaultTolerance.FailureAction.Fail) {
            String hint = policy.retryExitCodes().isEmpty() && policy.retryPatterns().isEmpty() ? "" : "; no retry rule matches";
            return fail("InstanceFailed: " + what + hint, faults);
        }
        String signature = (failed.exitCode() == null ? failed.detail() : "exit code " + failed.exitCode()) + (rule == null ? "" : ", " + rule);
        FaultState counted = faults.failedWith(signature);
        if (policy.sameErrorLimit() > 0 && counted.sameErrorCount() >= policy.sameErrorLimit()) {
            return fail("SameErrorRepeated: " + signature + " happened " + counted.sameErrorCount() + " times in a row; last: " + what, counted);
        }
        if (faults.failures() >= policy.maxRestarts()) {
            return fail("RestartBudgetExhausted: " + budget(faults.failures(), policy.maxRestarts(), "failures", "maxRestarts") + "; last: " + what
                    + (rule == null ? "" : " (" + rule + ")"), counted);
        }
        Duration backoff = policy.backoff(faults.failures() + 1);
        return new Verdict(true, RestartCause.FAILURE, backoff,
                "InstanceFailed: " + what + (rule == null ? "" : " (" + rule + ")") + "; restarting" + after(backoff), counted);
    }

    /** The first rule that makes this failure retryable, described, or {@code null}. */
    static String matchingRule(FaultTolerance policy, InstanceFailed failed) {
        for (FaultTolerance.ExitCodeRange range : policy.retryExitCodes()) {
            if (failed.exitCode() != null && range.contains(failed.exitCode())) {
                return "retryOn.exitCodes " + range;
            }
        }
        long deadline = System.nanoTime() + MATCH_BUDGET.toNanos();
        for (String regex : policy.retryPatterns()) {
            Pattern pattern = Pattern.compile(regex);
            for (String line : failed.logLines()) {
                String text = line.length() > MAX_LINE ? line.substring(0, MAX_LINE) : line;
                try {
                    if (pattern.matcher(new Deadlined(text, deadline)).find()) {
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
        return new Verdict(false, null, Duration.ZERO, why, faults);
    }

    private static String budget(int used, int max, String what, String field) {
        return "restarted " + used + " time(s) for " + what + " (faultTolerance." + field + ": " + max + ")";
    }

    private static String after(Duration backoff) {
        return backoff.isZero() ? "" : " in " + Durations.format(backoff);
    }

    /** Text that stops being readable after a deadline, so that a runaway regular expression ends. */
    private record Deadlined(CharSequence text, long deadline) implements CharSequence {
        static final class Expired extends RuntimeException {
            Expired() {
                super(null, null, false, false);
            }
        }

        @Override
        public char charAt(int index) {
            if ((index & 0xff) == 0 && System.nanoTime() > deadline) {
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
            return new Deadlined(text.subSequence(start, end), deadline);
        }

        @Override
        public String toString() {
            return text.toString();
        }
    }
}
