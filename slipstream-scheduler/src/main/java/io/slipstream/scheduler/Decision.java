package io.slipstream.scheduler;

import static java.util.Objects.requireNonNull;

import io.slipstream.api.run.RealTimeResources;
import io.slipstream.api.run.RunId;
import io.slipstream.api.run.WaitReason;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * What the scheduler decided for one run. Appliers implement {@link Handler}, so that a new kind of decision fails to
 * compile until every applier handles it (as {@code Step.Handler} does for the run lifecycle).
 */
public sealed interface Decision permits Decision.Admit, Decision.Preempt, Decision.Promote, Decision.Wait, Decision.Grow, Decision.Shrink {
    RunId runId();

    <R> R accept(Handler<R> handler);

    /** One method per kind of decision. */
    interface Handler<R> {
        R admit(Admit decision);

        R preempt(Preempt decision);

        R promote(Promote decision);

        R waiting(Wait decision);

        R grow(Grow decision);

        R shrink(Shrink decision);
    }

    /**
     * Start the run: every instance has a placement, on its quota's guarantee or on idle capacity. An elastic run
     * ({@link PendingRun#minReplicas}) is placed its minimum and the extras that fit: {@code realTimeResources} is how
     * its minimum stands, and {@code borrowed} names the extras placed on idle capacity while the minimum is
     * {@code InQuota} (empty otherwise: a run on idle capacity has every instance there).
     */
    record Admit(RunId runId, List<Placement> placements, RealTimeResources realTimeResources, Set<Integer> borrowed) implements Decision {
        public Admit {
            requireNonNull(runId, "runId is null");
            placements = List.copyOf(placements);
            requireNonNull(realTimeResources, "realTimeResources is null");
            borrowed = Collections.unmodifiableSet(new TreeSet<>(borrowed));
            if (!borrowed.isEmpty() && realTimeResources != RealTimeResources.InQuota) {
                throw new IllegalArgumentException("run " + runId + " is admitted on idle capacity: no instance is named borrowed");
            }
        }

        /** Every instance as {@code realTimeResources} says (a rigid run's admission). */
        public Admit(RunId runId, List<Placement> placements, RealTimeResources realTimeResources) {
            this(runId, placements, realTimeResources, Set.of());
        }

        @Override
        public <R> R accept(Handler<R> handler) {
            return handler.admit(this);
        }
    }

    /**
     * Stop an active run (notice, grace period, kill) and queue it again; its resources go to {@code forRun}.
     * {@code kind} says why (a reclaim, a move, or fair sharing): a {@link PreemptKind#Move} stops a guaranteed run
     * only to start it again elsewhere, so that a gang fragmentation blocks can start: it is not a failure, and the
     * server must not charge it to the run's restart budget (its reason starts with {@code Moved}).
     */
    record Preempt(RunId runId, RunId forRun, String reason, PreemptKind kind) implements Decision {
        /** The reason a moved run reads (its notice file, its history): the run it makes room for is not named. */
        public static final String MOVED = "Moved: it is started again on another node from its last checkpoint, so that a guaranteed run"
                + " that needs a whole node or a large part of one can start";

        public Preempt {
            requireNonNull(runId, "runId is null");
            requireNonNull(forRun, "forRun is null");
            requireNonNull(reason, "reason is null");
            requireNonNull(kind, "kind is null");
            if (kind == PreemptKind.Extras) {
                throw new IllegalArgumentException("a run is never stopped whole for extras: only shrunk");
            }
        }

        @Override
        public <R> R accept(Handler<R> handler) {
            return handler.preempt(this);
        }

        /** A preemption that makes room: a reclaim, or within a quota. */
        public Preempt(RunId runId, RunId forRun, String reason) {
            this(runId, forRun, reason, PreemptKind.Reclaim);
        }
    }

    /** Why a run is preempted. */
    enum PreemptKind {
        /** Its resources go to a run that comes first: a reclaim of borrowed capacity, or within its quota. */
        Reclaim,
        /** Defragmentation: it is requeued to be placed elsewhere, where it does not block a guaranteed gang. */
        Move,
        /**
         * Fair sharing: it borrows for a quota above its fair share of the pool's idle capacity, which a borrower of a
         * quota below its share needs ({@link FairPreemption}); a preemption like a reclaim, its reason starts with
         * {@code FairSharing}. Of a {@link Shrink}: the run's extras on idle capacity, taken before any run is stopped whole.
         */
        FairSharing,
        /**
         * Only of a {@link Shrink}: a queued run's minimum comes before other runs' extras (docs/elastic.md): a borrower
         * still waiting takes elastic runs' extras on idle capacity, a queued run its own quota's guarantee from the
         * extras of that quota's elastic runs. No guarantee is reclaimed; its reason starts with {@code Shrunk}.
         */
        Extras
    }

    /** A run on idle capacity now fits its quota's guarantee: from now on it is guaranteed, without a restart. */
    record Promote(RunId runId) implements Decision {
        public Promote {
            requireNonNull(runId, "runId is null");
        }

        @Override
        public <R> R accept(Handler<R> handler) {
            return handler.promote(this);
        }
    }

    /**
     * Add instances to a running elastic run ({@link ElasticRun}): {@code placements} are slots it does not hold. The
     * run changes size: the applier restarts its survivors in place with the new world (dense ranks 0..n-1). Never
     * decided for a run whose shrink is still in flight. {@code borrowed}: which of the new instances are on idle
     * capacity while the run is {@code InQuota} (a run on idle capacity grows only on idle capacity: then empty).
     */
    record Grow(RunId runId, List<Placement> placements, Set<Integer> borrowed) implements Decision {
        public Grow {
            requireNonNull(runId, "runId is null");
            placements = List.copyOf(placements);
            if (placements.isEmpty()) {
                throw new IllegalArgumentException("run " + runId + " grows by nothing");
            }
            borrowed = Collections.unmodifiableSet(new TreeSet<>(borrowed));
        }

        @Override
        public <R> R accept(Handler<R> handler) {
            return handler.grow(this);
        }
    }

    /**
     * Remove some instances of a running elastic run, its extras on idle capacity, instead of stopping a run whole: each
     * gets the notice and grace period of a preemption, and is not a failure; the run keeps at least its minimum and,
     * once they are gone, its survivors are restarted in place with the new world. Their capacity goes to
     * {@code forRun}; {@code kind} says why ({@link PreemptKind#Reclaim}: a guarantee reclaimed, or room under the same
     * quota's max; {@link PreemptKind#Extras}: a queued run's minimum before extras; {@link PreemptKind#FairSharing}:
     * preemption for fairness, which takes extras first; never a move), and
     * {@code reason} is what the removed instances read (it names no other team's run or quota).
     */
    record Shrink(RunId runId, List<Integer> ranks, RunId forRun, String reason, PreemptKind kind) implements Decision {
        public Shrink {
            requireNonNull(runId, "runId is null");
            ranks = List.copyOf(new TreeSet<>(ranks));
            if (ranks.isEmpty()) {
                throw new IllegalArgumentException("run " + runId + " shrinks by nothing");
            }
            requireNonNull(forRun, "forRun is null");
            requireNonNull(reason, "reason is null");
            requireNonNull(kind, "kind is null");
            if (kind == PreemptKind.Move) {
                throw new IllegalArgumentException("a move stops a run whole");
            }
        }

        @Override
        public <R> R accept(Handler<R> handler) {
            return handler.shrink(this);
        }
    }

    /**
     * Keep the run queued. {@code reason} is a stable word ({@code WaitingForQuota}, {@code ExceedsQuotaMax},
     * {@code NoNodeFits}, {@code WaitingForResources}, {@code WaitingForReclaim}, {@code WaitingForIdleCapacity},
     * {@code QuotaNotFound}); {@code message} says it for people; {@code position} is 1 for the next run of its queue.
     */
    record Wait(RunId runId, WaitReason reason, String message, int position) implements Decision {
        public Wait {
            requireNonNull(runId, "runId is null");
            requireNonNull(reason, "reason is null");
            requireNonNull(message, "message is null");
        }

        @Override
        public <R> R accept(Handler<R> handler) {
            return handler.waiting(this);
        }
    }
}
