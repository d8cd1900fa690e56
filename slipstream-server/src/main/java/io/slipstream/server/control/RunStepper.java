package io.slipstream.server.control;

import io.slipstream.executor.Executor;
import io.slipstream.model.InstanceRecord;
import io.slipstream.model.RunRecord;
import io.slipstream.model.lifecycle.RunLifecycle;
import io.slipstream.store.Store;
import java.time.Clock;
import java.util.List;

/** Starts a run's {@link RunSteps} for one cycle, with what every run's steps share. Safe on any thread (launches). */
final class RunStepper {
    private final Store store;
    private final Executor executor;
    private final Launcher launcher;
    private final FaultWatch faultWatch;
    private final Clock clock;
    private final RunLifecycle lifecycle;

    RunStepper(Store store, Executor executor, Launcher launcher, FaultWatch faultWatch, Clock clock, RunLifecycle lifecycle) {
        this.store = store;
        this.executor = executor;
        this.launcher = launcher;
        this.faultWatch = faultWatch;
        this.clock = clock;
        this.lifecycle = lifecycle;
    }

    RunSteps of(RunRecord run, List<InstanceRecord> instances) {
        return new RunSteps(store, executor, launcher, faultWatch, clock, run, instances);
    }

    /** The store the steps write to: a worker stepping runs beside the loop's thread defers its writes' durability as the loop does. */
    Store store() {
        return store;
    }

    RunLifecycle lifecycle() {
        return lifecycle;
    }

    Launcher launcher() {
        return launcher;
    }

    FaultWatch faultWatch() {
        return faultWatch;
    }
}
