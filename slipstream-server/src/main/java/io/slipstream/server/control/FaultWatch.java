package io.slipstream.server.control;

import io.slipstream.api.run.InstanceId;
import io.slipstream.api.run.InstanceState;
import io.slipstream.api.spec.Durations;
import io.slipstream.api.spec.FaultTolerance;
import io.slipstream.executor.Activity;
import io.slipstream.executor.Executor;
import io.slipstream.executor.LogStream;
import io.slipstream.model.FaultState;
import io.slipstream.model.InstanceRecord;
import io.slipstream.model.RunRecord;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Looks at running instances for what fault tolerance needs: their last output and reported progress (hang detection,
 * the run's last checkpoint), the end of a failed instance's log (error patterns), and the work a stop throws away.
 */
final class FaultWatch {
    private static final Logger LOG = LoggerFactory.getLogger(FaultWatch.class);
    /** How often a run's instances are looked at; hang timeouts are coarser than this. */
    static final Duration SAMPLE_EVERY = Duration.ofSeconds(2);
    private static final int LOG_TAIL_BYTES = 64 * 1024;

    private final Executor executor;
    private final ProgressReports reports;
    private final Map<io.slipstream.api.run.RunId, Instant> nextSample = new ConcurrentHashMap<>();

    FaultWatch(Executor executor, ProgressReports reports) {
        this.executor = executor;
        this.reports = reports;
    }

    /** Whether the run's instances are due to be looked at again. */
    boolean due(RunRecord run, Instant now) {
        Instant next = nextSample.get(run.id());
        if (next != null && now.isBefore(next)) {
            return false;
        }
        nextSample.put(run.id(), now.plus(SAMPLE_EVERY));
        return true;
    }

    void forget(RunRecord run) {
        nextSample.remove(run.id());
    }

    /** Forgets the runs that are no longer active. */
    void retainOnly(java.util.Set<io.slipstream.api.run.RunId> active) {
        nextSample.keySet().retainAll(active);
        reports.retainOnly(active);
    }

    Activity activityOf(InstanceRecord instance) {
        if (instance.handle().isEmpty()) {
            return Activity.NONE;
        }
        try {
            Activity seen = executor.activity(instance.id(), instance.handle());
            Activity.Progress reported = reports.latest(instance.id());
            // The progress file where the executor reads it, else what the instance reported through the API.
            return seen.progress() != null || reported == null ? seen : new Activity(seen.lastOutputAt(), reported);
        } catch (RuntimeException e) {
            LOG.debug("cannot look at {}: {}", instance.id(), e.toString());
            return Activity.NONE;
        }
    }

    /** The run's fault record with the newest progress and checkpoint its instances of this attempt reported. */
    FaultState progress(RunRecord run, List<InstanceRecord> instances, Map<InstanceId, Activity> activities) {
        FaultState faults = run.faults();
        for (InstanceRecord instance : instances) {
            Activity.Progress progress = activities.get(instance.id()) == null ? null : activities.get(instance.id()).progress();
            if (progress != null) {
                faults = faults.progressed(progress.step(), progress.at(), progress.checkpointStep(), progress.checkpointAt());
            }
        }
        return faults;
    }

    /**
     * Why the run counts as hung, or {@code null}: nothing from any instance (output, progress, start) for
     * {@code hangTimeout}, or an instance succeeded and the others are still running {@code exitHangTimeout} later.
     */
    String hung(RunRecord run, List<InstanceRecord> instances, Map<InstanceId, Activity> activities, Instant now) {
        FaultTolerance policy = run.spec().faultTolerance();
        if (policy.exitHangTimeout() != null) {
            Instant firstSuccess = instances.stream().filter(i -> i.state() == InstanceState.SUCCEEDED).map(InstanceRecord::finishedAt)
                    .filter(Objects::nonNull).min(Comparator.naturalOrder()).orElse(null);
            boolean othersRunning = instances.stream().anyMatch(i -> i.state() == InstanceState.RUNNING);
            if (firstSuccess != null && othersRunning && !now.isBefore(firstSuccess.plus(policy.exitHangTimeout()))) {
                return "an instance succeeded " + Durations.format(policy.exitHangTimeout()) + " ago and the others have not exited (exitHangTimeout)";
            }
        }
        if (policy.hangTimeout() == null || instances.stream().noneMatch(i -> i.state() == InstanceState.RUNNING)) {
            return null;
        }
        Instant last = run.attemptStartedAt();
        for (InstanceRecord instance : instances) {
            last = later(last, instance.startedAt());
            Activity activity = activities.get(instance.id());
            if (activity != null) {
                last = later(last, activity.lastOutputAt());
                last = later(last, activity.progress() == null ? null : activity.progress().at());
            }
        }
        if (last != null && !now.isBefore(last.plus(policy.hangTimeout()))) {
            return "no output and no progress from any instance for " + Durations.format(Duration.between(last, now).withNanos(0))
                    + " (hangTimeout " + Durations.format(policy.hangTimeout()) + ")";
        }
        return null;
    }

    /** The last lines a failed instance wrote, stderr first (that is where errors go), then stdout. */
    List<String> lastLines(InstanceRecord instance) {
        List<String> lines = new ArrayList<>();
        if (instance.handle().isEmpty()) {
            return lines;
        }
        for (LogStream stream : new LogStream[] {LogStream.STDERR, LogStream.STDOUT}) {
            try {
                String text = new String(executor.readLogTail(instance.id(), instance.handle(), stream, LOG_TAIL_BYTES).data(), StandardCharsets.UTF_8);
                lines.addAll(List.of(text.split("\n")));
            } catch (RuntimeException e) {
                LOG.debug("cannot read the log of {}: {}", instance.id(), e.toString());
            }
        }
        return lines;
    }

    /**
     * Instance-milliseconds this attempt ran after its last checkpoint: each instance from its start or the newest
     * checkpoint saved while it ran, whichever is later, to when it stopped.
     */
    static long workLostMillis(FaultState faults, List<InstanceRecord> instances, Instant now) {
        long lost = 0;
        for (InstanceRecord instance : instances) {
            if (instance.startedAt() == null) {
                continue;
            }
            Instant from = later(instance.startedAt(), faults.checkpointAt());
            Instant to = instance.finishedAt() == null ? now : instance.finishedAt();
            lost += Math.max(0, Duration.between(from, to).toMillis());
        }
        return lost;
    }

    private static Instant later(Instant a, Instant b) {
        if (a == null) {
            return b;
        }
        return b == null || a.isAfter(b) ? a : b;
    }
}
