package io.slipstream.model.lifecycle;

import static java.util.Objects.requireNonNull;

import io.slipstream.model.InstanceRecord;
import io.slipstream.model.RunRecord;
import java.time.Duration;
import java.util.List;

/**
 * What to do next for one run, as {@link RunLifecycle} decides it. The control loop persists the records a step
 * carries (with their events) before it tells the executor anything, then decides again: a cycle takes as many steps
 * as the run needs until it {@link Stay}s.
 */
public sealed interface Step {
    /** Handles each kind of step; the compiler holds every handler to all of them (Java 17 has no exhaustive switch). */
    interface Handler<R> {
        R stay(Stay step);

        R transition(Transition step);

        R recordProgress(RecordProgress step);

        R terminate(Terminate step);

        R loseInstances(LoseInstances step);

        R launch(Launch step);

        R restartInstance(RestartInstance step);

        R changeWorld(ChangeWorld step);

        R requeue(Requeue step);

        R end(End step);
    }

    <R> R accept(Handler<R> handler);

    /** Nothing to do until something changes (a report, the time, a cancel). */
    record Stay() implements Step {
        @Override
        public <R> R accept(Handler<R> handler) {
            return handler.stay(this);
        }
    }

    /** The run moves to another state: {@code next} carries it and its reason. */
    record Transition(RunRecord next) implements Step {
        public Transition {
            requireNonNull(next, "next is null");
        }

        @Override
        public <R> R accept(Handler<R> handler) {
            return handler.transition(this);
        }
    }

    /** What the run's instances reported of their progress and checkpoints, to keep; its state does not change. */
    record RecordProgress(RunRecord next) implements Step {
        public RecordProgress {
            requireNonNull(next, "next is null");
        }

        @Override
        public <R> R accept(Handler<R> handler) {
            return handler.recordProgress(this);
        }
    }

    /**
     * The run is stopping (it is, or moves to, TERMINATING as {@code next} says; {@code next} may be the run as it is:
     * an elastic run whose world changes stays RUNNING while the world before stops)
     * and these instances are told to stop. A PENDING one the executor never heard of ends KILLED ("Never started").
     */
    record Terminate(RunRecord next, List<Stop> stops) implements Step {
        public Terminate {
            requireNonNull(next, "next is null");
            stops = List.copyOf(stops);
        }

        @Override
        public <R> R accept(Handler<R> handler) {
            return handler.terminate(this);
        }
    }

    /** One instance to stop: SIGTERM, then SIGKILL after {@code grace}; {@code reason} is what its executor records. */
    record Stop(InstanceRecord instance, Duration grace, String reason) {
        public Stop {
            requireNonNull(instance, "instance is null");
            requireNonNull(grace, "grace is null");
        }
    }

    /** Instances that were never launched on a node now declared down: they end NODE_LOST, as {@code lost} says. */
    record LoseInstances(List<InstanceRecord> lost) implements Step {
        public LoseInstances {
            lost = List.copyOf(lost);
        }

        @Override
        public <R> R accept(Handler<R> handler) {
            return handler.loseInstances(this);
        }
    }

    /** These placed instances may start now (startup order allowing). */
    record Launch(List<InstanceRecord> instances) implements Step {
        public Launch {
            instances = List.copyOf(instances);
        }

        @Override
        public <R> R accept(Handler<R> handler) {
            return handler.launch(this);
        }
    }

    /**
     * One failed instance starts again in place ({@code faultTolerance.runType: Async}) while the others keep running:
     * {@code next} is the run with the restart counted, {@code instance} the rank pending again (same node, GPUs and
     * endpoint; launched once the backoff in {@code next}'s {@code retryAt} is over), {@code message} says which and why.
     */
    record RestartInstance(RunRecord next, InstanceRecord instance, String message) implements Step {
        public RestartInstance {
            requireNonNull(next, "next is null");
            requireNonNull(instance, "instance is null");
            requireNonNull(message, "message is null");
        }

        @Override
        public <R> R accept(Handler<R> handler) {
            return handler.restartInstance(this);
        }
    }

    /**
     * Every instance of an elastic run's world before is gone: the new world starts ({@code next}, its world no longer
     * changing), {@code restarted} its surviving members pending again in place (same node, GPUs, endpoint), launched by
     * the steps that follow with the new world's size and ranks; {@code message} says what changed.
     */
    record ChangeWorld(RunRecord next, List<InstanceRecord> restarted, String message) implements Step {
        public ChangeWorld {
            requireNonNull(next, "next is null");
            restarted = List.copyOf(restarted);
            requireNonNull(message, "message is null");
        }

        @Override
        public <R> R accept(Handler<R> handler) {
            return handler.changeWorld(this);
        }
    }

    /**
     * Every instance is gone and the run is queued again for its next attempt ({@code next}: QUEUED, not admitted
     * before its backoff), having lost {@code workLost}.
     */
    record Requeue(RunRecord next, WorkLost workLost) implements Step {
        public Requeue {
            requireNonNull(next, "next is null");
            requireNonNull(workLost, "workLost is null");
        }

        @Override
        public <R> R accept(Handler<R> handler) {
            return handler.requeue(this);
        }
    }

    /** Every instance is gone and the run ends as {@code next} says; {@code workLost} is {@code null} when nothing counts as lost. */
    record End(RunRecord next, WorkLost workLost) implements Step {
        public End {
            requireNonNull(next, "next is null");
        }

        @Override
        public <R> R accept(Handler<R> handler) {
            return handler.end(this);
        }
    }
}
