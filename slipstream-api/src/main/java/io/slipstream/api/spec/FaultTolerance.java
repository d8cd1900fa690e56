package io.slipstream.api.spec;

import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonValue;
import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonProperty;
import io.slipstream.api.run.EndCause;
import java.time.Duration;
import java.util.List;

/**
 * When a run that stopped for a reason other than success is started again, and how often. Each cause has its own
 * budget, so that preemptions (the platform's doing) never use up the budget for failures (the workload's doing).
 *
 * @param runType           {@code Sync}: a restart is a new attempt of the whole gang; {@code Async}: only the failed
 *                          instance restarts, in place, while the others keep running
 * @param maxRestarts       restarts after failures that the rules retry
 * @param maxPreemptions    requeues after preemption; {@code null}: unlimited
 * @param maxNodeLost       restarts after a node was lost
 * @param maxHangs          restarts after the run was declared hung
 * @param backoffBase       wait before the first restart after a failure or hang; doubles each time
 * @param backoffCap        the longest wait between restarts
 * @param retryExitCodes    exit codes that are retryable failures
 * @param retryPatterns     regular expressions (valid ones: the reader checks): a failed instance whose log has a
 *                          matching line is retryable
 * @param retryReasons      end causes the executor reports (e.g. {@code OOMKilled}) that are retryable failures
 * @param otherFailures     what happens to a failure no rule matches
 * @param sameErrorLimit    stop retrying once the same error happened this many times in a row ({@code 0}: never)
 * @param hangTimeout       no output and no progress for this long means hung ({@code null}: not watched)
 * @param exitHangTimeout   an instance succeeded and the others have not exited after this long means hung
 */
public record FaultTolerance(
        RunType runType,
        int maxRestarts,
        Integer maxPreemptions,
        @JsonProperty("maxNodeLostRestarts") int maxNodeLost,
        @JsonProperty("maxHangRestarts") int maxHangs,
        @JsonIgnore Duration backoffBase,
        @JsonIgnore Duration backoffCap,
        @JsonIgnore List<ExitCodeRange> retryExitCodes,
        @JsonIgnore List<String> retryPatterns,
        @JsonIgnore List<EndCause> retryReasons,
        FailureAction otherFailures,
        @JsonInclude(JsonInclude.Include.NON_DEFAULT) int sameErrorLimit,
        Duration hangTimeout,
        Duration exitHangTimeout) {

    public static final int DEFAULT_MAX_RESTARTS = 3;
    public static final Duration DEFAULT_BACKOFF_BASE = Duration.ofSeconds(10);
    public static final Duration DEFAULT_BACKOFF_CAP = Duration.ofMinutes(5);

    /** What a job without a {@code faultTolerance} block gets: failures fail the run, preemptions always requeue it. */
    public static final FaultTolerance DEFAULT = new FaultTolerance(RunType.Sync, DEFAULT_MAX_RESTARTS, null, DEFAULT_MAX_RESTARTS,
            DEFAULT_MAX_RESTARTS, DEFAULT_BACKOFF_BASE, DEFAULT_BACKOFF_CAP, List.of(), List.of(), List.of(), FailureAction.Fail, 0, null, null);

    public FaultTolerance {
        runType = runType == null ? RunType.Sync : runType;
        retryExitCodes = List.copyOf(retryExitCodes);
        retryPatterns = List.copyOf(retryPatterns);
        retryReasons = List.copyOf(retryReasons);
        otherFailures = otherFailures == null ? FailureAction.Fail : otherFailures;
    }

    /** The document form: budgets named by cause, {@code backoff: {base, cap}}, {@code retryOn: {exitCodes, errorPatterns, reasons}}. */
    @JsonCreator
    public static FaultTolerance of(@JsonProperty("runType") RunType runType, @JsonProperty("maxRestarts") Integer maxRestarts,
                                    @JsonProperty("maxPreemptions") Integer maxPreemptions,
                                    @JsonProperty("maxNodeLostRestarts") Integer maxNodeLostRestarts,
                                    @JsonProperty("maxHangRestarts") Integer maxHangRestarts, @JsonProperty("backoff") Backoff backoff,
                                    @JsonProperty("retryOn") RetryOn retryOn, @JsonProperty("otherFailures") FailureAction otherFailures,
                                    @JsonProperty("sameErrorLimit") Integer sameErrorLimit, @JsonProperty("hangTimeout") Duration hangTimeout,
                                    @JsonProperty("exitHangTimeout") Duration exitHangTimeout) {
        Backoff waits = backoff == null ? new Backoff(null, null) : backoff;
        RetryOn retry = retryOn == null ? new RetryOn(null, null, null) : retryOn;
        return new FaultTolerance(runType, orDefault(maxRestarts), maxPreemptions, orDefault(maxNodeLostRestarts), orDefault(maxHangRestarts),
                waits.base() == null ? DEFAULT_BACKOFF_BASE : waits.base(), waits.cap() == null ? DEFAULT_BACKOFF_CAP : waits.cap(),
                retry.exitCodes() == null ? List.of() : retry.exitCodes(), retry.errorPatterns() == null ? List.of() : retry.errorPatterns(),
                retry.reasons() == null ? List.of() : retry.reasons(), otherFailures, sameErrorLimit == null ? 0 : sameErrorLimit, hangTimeout,
                exitHangTimeout);
    }

    /** {@code backoff} as written. */
    @JsonProperty("backoff")
    Backoff writtenBackoff() {
        return new Backoff(backoffBase, backoffCap);
    }

    /** {@code retryOn} as written ({@code null}: nothing is retried by rule). */
    @JsonProperty("retryOn")
    RetryOn writtenRetryOn() {
        return hasRetryRules() ? new RetryOn(retryExitCodes, retryPatterns, retryReasons) : null;
    }

    /** Whether any {@code retryOn} rule is set: else only {@code otherFailures: Retry} retries a failure. */
    public boolean hasRetryRules() {
        return !retryExitCodes.isEmpty() || !retryPatterns.isEmpty() || !retryReasons.isEmpty();
    }

    /** For writing: the default policy is left out. */
    static final class IsDefault {
        @Override
        public boolean equals(Object value) {
            return DEFAULT.equals(value);
        }

        @Override
        public int hashCode() {
            return 0;
        }
    }

    private static int orDefault(Integer budget) {
        return budget == null ? DEFAULT_MAX_RESTARTS : budget;
    }

    /** {@code backoff} in a document. */
    public record Backoff(Duration base, Duration cap) {
    }

    /** {@code retryOn} in a document. */
    public record RetryOn(@JsonInclude(JsonInclude.Include.NON_EMPTY) List<ExitCodeRange> exitCodes,
                          @JsonInclude(JsonInclude.Include.NON_EMPTY) List<String> errorPatterns,
                          @JsonInclude(JsonInclude.Include.NON_EMPTY) List<EndCause> reasons) {
    }

    /** How a restart is done. */
    public enum RunType {
        /** The whole gang stops and starts again as a new attempt, with fresh metadata. */
        Sync,
        /**
         * Only the failed instance restarts, with the same rank on the same node and GPUs, while the others keep running
         * (parameter-server style workloads that tolerate a peer's restart). A lost node, a hang, a preemption or a
         * cancellation still stop the whole run, as with {@link #Sync}.
         */
        Async
    }

    /** What to do with a failure. */
    public enum FailureAction {
        Retry,
        Fail
    }

    /** Exit codes {@code from..to}, both included. */
    public record ExitCodeRange(int from, int to) {
        private static final java.util.regex.Pattern RANGE = java.util.regex.Pattern.compile("(\\d{1,3})(?:-(\\d{1,3}))?");

        /** {@code 137}, {@code "137"} or {@code "128-255"}; {@code null} if it is none of them. */
        @JsonCreator(mode = JsonCreator.Mode.DELEGATING)
        public static ExitCodeRange parse(Object value) {
            if (value instanceof Number number) {
                long code = number.longValue();
                return number.doubleValue() == code && code >= 0 && code <= 255 ? new ExitCodeRange((int) code, (int) code) : null;
            }
            if (!(value instanceof String text)) {
                return null;
            }
            java.util.regex.Matcher m = RANGE.matcher(text.trim());
            if (!m.matches()) {
                return null;
            }
            int from = Integer.parseInt(m.group(1));
            int to = m.group(2) == null ? from : Integer.parseInt(m.group(2));
            return from <= to && to <= 255 ? new ExitCodeRange(from, to) : null;
        }

        public boolean contains(int code) {
            return code >= from && code <= to;
        }

        /** As written: {@code 137}, or {@code "128-255"}. */
        @JsonValue
        Object written() {
            return from == to ? (Object) from : toString();
        }

        @Override
        public String toString() {
            return from == to ? Integer.toString(from) : from + "-" + to;
        }
    }

    /** The backoff before restart number {@code restart} (1 for the first): base, 2×base, 4×base, ... up to the cap. */
    public Duration backoff(int restart) {
        if (restart <= 0) {
            return Duration.ZERO;
        }
        Duration wait = backoffBase;
        for (int i = 1; i < restart && wait.compareTo(backoffCap) < 0; i++) {
            wait = wait.multipliedBy(2);
        }
        return wait.compareTo(backoffCap) > 0 ? backoffCap : wait;
    }
}
