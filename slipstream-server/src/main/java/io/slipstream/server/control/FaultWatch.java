package io.slipstream.server.control;

import io.slipstream.api.run.InstanceId;
import io.slipstream.executor.Activity;
import io.slipstream.executor.Executor;
import io.slipstream.executor.LogStream;
import io.slipstream.model.InstanceRecord;
import io.slipstream.model.RunRecord;
import io.slipstream.model.lifecycle.InstanceActivity;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Looks at instances for what their run's lifecycle needs to see: their last output and reported progress (hang
 * detection, the run's last checkpoint, the work a stop throws away) and the end of a failed instance's log (error
 * patterns). It only reads; {@link io.slipstream.model.lifecycle.RunLifecycle} judges.
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

    private Activity activityOf(InstanceRecord instance) {
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

    /** What each instance last showed, for the run's lifecycle: hangs, progress and the work a stop loses. */
    Map<InstanceId, InstanceActivity> activities(List<InstanceRecord> instances) {
        Map<InstanceId, InstanceActivity> activities = new HashMap<>();
        for (InstanceRecord instance : instances) {
            Activity seen = activityOf(instance);
            Activity.Progress progress = seen.progress();
            activities.put(instance.id(), progress == null ? new InstanceActivity(seen.lastOutputAt(), null, null, null, null)
                    : new InstanceActivity(seen.lastOutputAt(), progress.step(), progress.at(), progress.checkpointStep(), progress.checkpointAt()));
        }
        return activities;
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
}
