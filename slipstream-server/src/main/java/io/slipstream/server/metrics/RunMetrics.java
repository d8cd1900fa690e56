package io.slipstream.server.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.slipstream.api.run.QuotaId;
import io.slipstream.api.run.RunId;
import io.slipstream.model.RunRecord;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Counts what this replica did to runs (admissions, preemptions, restarts, work lost, ends), from the runs it writes:
 * each write is compared with the run as last known ({@link RunChanges}). Runs it only reads are remembered, never
 * counted, so that replicas over one store do not count each other's work twice.
 */
final class RunMetrics {
    static final String NO_QUOTA = "(none)";
    private static final Duration[] WAIT_BUCKETS = {Duration.ofSeconds(1), Duration.ofSeconds(5), Duration.ofSeconds(15), Duration.ofSeconds(30),
            Duration.ofMinutes(1), Duration.ofMinutes(2), Duration.ofMinutes(5), Duration.ofMinutes(10), Duration.ofMinutes(30), Duration.ofHours(1),
            Duration.ofHours(3), Duration.ofHours(6), Duration.ofHours(12), Duration.ofDays(1)};

    private final MeterRegistry registry;
    private final Clock clock;
    private final Map<RunId, RunChanges.Mark> marks = new ConcurrentHashMap<>();
    /** When the first borrower was told to give its resources back to each waiting owner. */
    private final Map<RunId, Instant> reclaimsSince = new ConcurrentHashMap<>();

    RunMetrics(MeterRegistry registry, Clock clock) {
        this.registry = registry;
        this.clock = clock;
    }

    /** A run read from the store: remembered if new to this replica. */
    void read(RunRecord run) {
        if (!run.state().isFinal()) {
            marks.putIfAbsent(run.id(), RunChanges.Mark.read(run));
        }
    }

    /** A run this replica wrote (its transaction committed). */
    synchronized void written(RunRecord run) {
        Instant now = clock.instant();
        RunChanges.Result result = RunChanges.between(marks.get(run.id()), run, now);
        if (run.state().isFinal()) {
            marks.remove(run.id());
            reclaimsSince.remove(run.id());
        } else {
            marks.put(run.id(), result.mark());
        }
        for (RunChanges.Change change : result.changes()) {
            String quota = label(change.quota());
            if (change instanceof RunChanges.Admitted admitted) {
                admitted(run.id(), quota, admitted, now);
            } else if (change instanceof RunChanges.Preempted preempted) {
                Counter.builder("slipstream.preemptions").description("Runs told to give their resources back, by the victim's quota")
                        .tag("quota", quota).register(registry).increment();
                if (preempted.owner() != null) {
                    reclaimsSince.putIfAbsent(preempted.owner(), now);
                }
            } else if (change instanceof RunChanges.Restarted restarted) {
                Counter.builder("slipstream.restarts").description("Runs queued again, by cause")
                        .tag("quota", quota).tag("cause", restarted.cause().name().toLowerCase(Locale.ROOT)).register(registry).increment();
            } else if (change instanceof RunChanges.WorkLost lost) {
                Counter.builder("slipstream.work.lost.seconds").description("Instance-seconds of work after the last checkpoint that stops threw away")
                        .tag("quota", quota).register(registry).increment(lost.lost().toMillis() / 1000.0);
            } else if (change instanceof RunChanges.Finished finished) {
                Counter.builder("slipstream.runs.finished").description("Runs that ended, by final state")
                        .tag("quota", quota).tag("state", finished.state().name()).register(registry).increment();
            } else {
                throw new IllegalStateException("a change the metrics do not know: " + change);
            }
        }
    }

    private void admitted(RunId run, String quota, RunChanges.Admitted admitted, Instant now) {
        Counter.builder("slipstream.admissions").description("Runs admitted, by quota and whether on its guarantee")
                .tag("quota", quota).tag("resources", admitted.resources().name()).register(registry).increment();
        if (admitted.waited() != null) {
            Timer.builder("slipstream.admission.wait").description("How long runs waited in the queue before admission")
                    .serviceLevelObjectives(WAIT_BUCKETS).tag("quota", quota).register(registry).record(admitted.waited());
        }
        Instant reclaimSince = reclaimsSince.remove(run);
        if (reclaimSince != null) {
            Timer.builder("slipstream.reclaim").description("From the first borrower told to give resources back to the owner's admission")
                    .serviceLevelObjectives(WAIT_BUCKETS).tag("quota", quota).register(registry).record(Duration.between(reclaimSince, now));
        }
    }

    static String label(QuotaId quota) {
        return quota == null ? NO_QUOTA : quota.toString();
    }
}
