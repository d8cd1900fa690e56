package io.slipstream.model.usage;

import io.slipstream.api.run.InstanceUsage;
import io.slipstream.api.run.RealTimeResources;
import io.slipstream.api.run.RunState;
import io.slipstream.api.spec.NodeGroupSpec;
import io.slipstream.api.spec.Resources;
import io.slipstream.model.FaultState.RestartCause;
import io.slipstream.model.RunRecord;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * What a run's change means for the usage record: a pure function of the run before and after the change and the
 * time of the change. A run is in one segment while it is queued, and in another for each stretch of an attempt on
 * its quota or on borrowed capacity; it moves between them on admission, promotion, requeue and its end.
 */
public final class UsageChanges {
    private UsageChanges() {
    }

    /** The changes of moving from {@code before} ({@code null}: a new run) to {@code after} at {@code now}. */
    public static List<UsageChange> between(RunRecord before, RunRecord after, Instant now) {
        UsageKind was = before == null ? null : kindOf(before);
        UsageKind is = kindOf(after);
        // An elastic run's change of size, or of its instances' standing, is a new segment too: each charges what the
        // run held while it lasted, on its guarantee and on idle capacity.
        boolean sameSegment = was == is && (before == null || before.attempt() == after.attempt() && total(before).equals(total(after))
                && borrowed(before).equals(borrowed(after)));
        if (sameSegment) {
            return List.of();
        }
        List<UsageChange> changes = new ArrayList<>(3);
        if (was != null) {
            long lostInstanceMillis = lostToPreemption(before, after);
            // Work lost is counted in instance-time: charged at what an instance of the run holds on average.
            Resources total = total(before);
            int instances = Math.max(1, before.world() != null ? before.world().members().size() : before.spec().instanceCount());
            changes.add(new UsageChange.Closed(before.id(), now, lostInstanceMillis * total.gpu() / instances,
                    lostInstanceMillis * total.milliCpu() / instances));
        }
        if (is != null) {
            Resources borrowed = is == UsageKind.IN_QUOTA ? borrowed(after) : Resources.NONE;
            Resources own = total(after).minus(borrowed);
            String user = after.origin().submittedBy();
            Instant at = before == null ? after.createdAt() : now;
            boolean mixed = borrowed.gpu() > 0 || borrowed.milliCpu() > 0;
            if (!mixed || own.gpu() > 0 || own.milliCpu() > 0) {
                changes.add(new UsageChange.Opened(after.id(), is, after.workspace(), after.spec().quota(), user, after.job(), own.gpu(),
                        own.milliCpu(), at));
            }
            if (mixed) { // its extras on idle capacity: a segment beside it
                changes.add(new UsageChange.Opened(after.id(), UsageKind.BORROWED, after.workspace(), after.spec().quota(), user, after.job(),
                        borrowed.gpu(), borrowed.milliCpu(), at, changes.get(changes.size() - 1) instanceof UsageChange.Opened));
            }
        }
        return changes;
    }

    /**
     * What an instance of {@code run} that ended at {@code at} used, as its executor measured it ({@code usage};
     * {@code null}: nothing to record), charged as what the run holds: on its quota's guarantee or borrowed. An instance
     * ends before its run moves on (a requeue or an end waits for every instance), so the run still holds then.
     */
    public static UsageChange.Measured measured(RunRecord run, InstanceUsage usage, Instant at) {
        return measured(run, -1, usage, at);
    }

    /** As {@link #measured(RunRecord, InstanceUsage, Instant)}, for the instance of {@code slot}: an elastic run's stand on their own. */
    public static UsageChange.Measured measured(RunRecord run, int slot, InstanceUsage usage, Instant at) {
        if (usage == null) {
            return null;
        }
        boolean borrowedSlot = run.world() != null && run.world().borrowed().contains(slot);
        UsageKind held = run.realTimeResources() == RealTimeResources.InQuota && !borrowedSlot ? UsageKind.IN_QUOTA : UsageKind.BORROWED;
        return new UsageChange.Measured(run.id(), held, run.workspace(), run.spec().quota(), run.origin().submittedBy(), run.job(), usage, at);
    }

    /** The segment a run in this state is in; {@code null} once it is final. */
    public static UsageKind kindOf(RunRecord run) {
        if (run.state() == RunState.QUEUED) {
            return UsageKind.QUEUED;
        }
        if (run.state().holdsResources()) {
            // As the scheduler reads it: a holding run that never said where it got its resources borrowed them.
            return run.realTimeResources() == RealTimeResources.InQuota ? UsageKind.IN_QUOTA : UsageKind.BORROWED;
        }
        return null;
    }

    /** Instance-milliseconds of work a stop for a preemption threw away in this change (the run's own count grew). */
    private static long lostToPreemption(RunRecord before, RunRecord after) {
        if (before.restartCause() != RestartCause.PREEMPTION) {
            return 0;
        }
        return Math.max(0, after.faults().workLostMillis() - before.faults().workLostMillis());
    }

    /** What an elastic run's instances on idle capacity hold while it stands InQuota (none for any other run). */
    static Resources borrowed(RunRecord run) {
        Resources total = Resources.NONE;
        if (run.world() != null && run.realTimeResources() == RealTimeResources.InQuota) {
            for (int slot : run.world().borrowed()) {
                Resources each = io.slipstream.model.ElasticWorld.groupOf(run.spec(), slot).resources();
                total = each == null ? total : total.plus(each);
            }
        }
        return total;
    }

    /** What all of a run's instances hold together: an elastic run's, those of its world. */
    public static Resources total(RunRecord run) {
        Resources total = Resources.NONE;
        if (run.world() != null) {
            for (int slot : run.world().members()) {
                Resources each = io.slipstream.model.ElasticWorld.groupOf(run.spec(), slot).resources();
                total = each == null ? total : total.plus(each);
            }
            return total;
        }
        for (NodeGroupSpec group : run.spec().nodeGroups()) {
            if (group.resources() != null) {
                total = total.plus(group.resources().times(group.replicas()));
            }
        }
        return total;
    }
}
