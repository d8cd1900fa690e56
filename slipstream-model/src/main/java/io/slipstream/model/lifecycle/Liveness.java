package io.slipstream.model.lifecycle;

import io.slipstream.api.run.InstanceId;
import io.slipstream.api.run.InstanceState;
import io.slipstream.api.spec.Durations;
import io.slipstream.api.spec.FaultTolerance;
import io.slipstream.model.FaultState;
import io.slipstream.model.InstanceRecord;
import io.slipstream.model.RunRecord;
import java.time.Duration;
import java.time.Instant;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/** What instances' activity says about their run: its newest progress and checkpoint, whether it hangs, the work a stop loses. */
final class Liveness {
    private Liveness() {
    }

    /** The run's fault record with the newest progress and checkpoint its instances of this attempt reported. */
    static FaultState progress(FaultState faults, List<InstanceRecord> instances, Map<InstanceId, InstanceActivity> activities) {
        for (InstanceRecord instance : instances) {
            InstanceActivity activity = activities.get(instance.id());
            if (activity != null && activity.step() != null) {
                faults = faults.progressed(activity.step(), activity.stepAt(), activity.checkpointStep(), activity.checkpointAt());
            }
        }
        return faults;
    }

    /**
     * Why the run counts as hung, or {@code null}: nothing from any instance (output, progress, start) for
     * {@code hangTimeout}, or an instance succeeded and the others are still running {@code exitHangTimeout} later.
     */
    static String hung(RunRecord run, List<InstanceRecord> instances, Map<InstanceId, InstanceActivity> activities, Instant now) {
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
            InstanceActivity activity = activities.get(instance.id());
            if (activity != null) {
                last = later(last, activity.lastOutputAt());
                last = later(last, activity.stepAt());
            }
        }
        if (last != null && !now.isBefore(last.plus(policy.hangTimeout()))) {
            return "no output and no progress from any instance for " + Durations.format(Duration.between(last, now).withNanos(0))
                    + " (hangTimeout " + Durations.format(policy.hangTimeout()) + ")";
        }
        return null;
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
