package io.slipstream.simulator.input;

import io.slipstream.api.run.QuotaId;
import static java.util.Objects.requireNonNull;

import io.slipstream.api.spec.IdleMode;
import io.slipstream.scheduler.Defragmentation;
import io.slipstream.scheduler.FairSharingPreemption;
import io.slipstream.scheduler.QuotaState;
import java.time.Duration;
import java.util.List;

/**
 * One way to run the trace: what the scheduler is given (quotas, every job's idle mode) and how the world around it
 * behaves (grace period, checkpoints, restarts, failures).
 *
 * @param idleMode           every job's idle mode; {@code null}: the trace's, {@code Acceptable} where it has none
 * @param gracePeriod        from the preemption notice to the kill
 * @param checkpointInterval progress between periodic checkpoints ({@link Duration#ZERO}: none)
 * @param checkpointSave     how long a save takes; a checkpoint counts once saved
 * @param checkpointOnNotice whether a preempted job saves its progress on the notice (and stops once saved)
 * @param restartOverhead    from an attempt's start to its first progress (loading the checkpoint, rendezvous)
 * @param schedulingInterval the least time between two scheduling cycles
 * @param meanTimeBetweenFailures of one instance ({@code null}: instances never fail); the gang restarts from its
 *                           last checkpoint
 * @param defragmentation    bounds on moving guaranteed runs to defragment; the policy's quotas then allow moves
 *                           ({@code defragmentation: {moves: true}}); {@code null}: no run is ever moved
 * @param fairSharing        whether a borrower below its quota's fair share preempts other quotas' borrowers
 *                           ({@code fairSharing: {preemption: ...}}); borrowers are admitted in share order either way
 * @param placement          which gangs are placed by the cluster's topology, and how ({@code null}: none, the
 *                           topology-blind placement)
 * @param elastic            which jobs are elastic, with what minimum, and what a change of size costs ({@code null}: every
 *                           job is rigid)
 */
public record Policy(
        String name,
        List<QuotaState> quotas,
        String quotasSource,
        IdleMode idleMode,
        Duration gracePeriod,
        Duration checkpointInterval,
        Duration checkpointSave,
        boolean checkpointOnNotice,
        Duration restartOverhead,
        Duration schedulingInterval,
        Duration meanTimeBetweenFailures,
        Defragmentation defragmentation,
        FairSharingPreemption fairSharing,
        PlacementRule placement,
        ElasticRule elastic) {
    public Policy {
        requireNonNull(name, "name is null");
        quotas = List.copyOf(quotas);
        requireNonNull(gracePeriod, "gracePeriod is null");
        requireNonNull(checkpointInterval, "checkpointInterval is null");
        requireNonNull(checkpointSave, "checkpointSave is null");
        requireNonNull(restartOverhead, "restartOverhead is null");
        requireNonNull(schedulingInterval, "schedulingInterval is null");
        requireNonNull(fairSharing, "fairSharing is null");
    }

    /** A policy whose jobs are all rigid. */
    public Policy(String name, List<QuotaState> quotas, String quotasSource, IdleMode idleMode, Duration gracePeriod, Duration checkpointInterval,
            Duration checkpointSave, boolean checkpointOnNotice, Duration restartOverhead, Duration schedulingInterval, Duration meanTimeBetweenFailures,
            Defragmentation defragmentation, FairSharingPreemption fairSharing, PlacementRule placement) {
        this(name, quotas, quotasSource, idleMode, gracePeriod, checkpointInterval, checkpointSave, checkpointOnNotice, restartOverhead, schedulingInterval,
                meanTimeBetweenFailures, defragmentation, fairSharing, placement, null);
    }

    /** A topology-blind policy. */
    public Policy(String name, List<QuotaState> quotas, String quotasSource, IdleMode idleMode, Duration gracePeriod, Duration checkpointInterval,
            Duration checkpointSave, boolean checkpointOnNotice, Duration restartOverhead, Duration schedulingInterval, Duration meanTimeBetweenFailures,
            Defragmentation defragmentation, FairSharingPreemption fairSharing) {
        this(name, quotas, quotasSource, idleMode, gracePeriod, checkpointInterval, checkpointSave, checkpointOnNotice, restartOverhead, schedulingInterval,
                meanTimeBetweenFailures, defragmentation, fairSharing, null);
    }

    /** A policy without preemption for fairness. */
    public Policy(String name, List<QuotaState> quotas, String quotasSource, IdleMode idleMode, Duration gracePeriod, Duration checkpointInterval,
            Duration checkpointSave, boolean checkpointOnNotice, Duration restartOverhead, Duration schedulingInterval, Duration meanTimeBetweenFailures,
            Defragmentation defragmentation) {
        this(name, quotas, quotasSource, idleMode, gracePeriod, checkpointInterval, checkpointSave, checkpointOnNotice, restartOverhead, schedulingInterval,
                meanTimeBetweenFailures, defragmentation, FairSharingPreemption.Never);
    }

    /** A policy that never moves runs. */
    public Policy(String name, List<QuotaState> quotas, String quotasSource, IdleMode idleMode, Duration gracePeriod, Duration checkpointInterval,
            Duration checkpointSave, boolean checkpointOnNotice, Duration restartOverhead, Duration schedulingInterval, Duration meanTimeBetweenFailures) {
        this(name, quotas, quotasSource, idleMode, gracePeriod, checkpointInterval, checkpointSave, checkpointOnNotice, restartOverhead, schedulingInterval,
                meanTimeBetweenFailures, null);
    }

    /** The quota a trace tenant's jobs are charged to: the tenant itself when it names one, else {@code <tenant>/gpus}. */
    public static QuotaId quotaOf(String tenant) {
        int slash = tenant.indexOf('/');
        return slash < 0 ? new QuotaId(tenant, "gpus") : new QuotaId(tenant.substring(0, slash), tenant.substring(slash + 1));
    }
}
