package io.slipstream.model.testing;

import static io.slipstream.testing.JobBuilder.aJob;

import io.slipstream.api.run.RealTimeResources;
import io.slipstream.api.run.RunId;
import io.slipstream.api.run.RunState;
import io.slipstream.api.spec.JobSpec;
import io.slipstream.model.FaultState;
import io.slipstream.model.RunOrigin;
import io.slipstream.model.RunRecord;
import io.slipstream.testing.JobBuilder;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;

/** Builds a {@link RunRecord}: a queued run, then the lifecycle steps asked for, in order. See {@link Runs}. */
public final class RunBuilder {
    private RunId id;
    private String workspace = "team-a";
    private final String job;
    private long jobVersion = 1;
    private JobSpec spec;
    private Instant createdAt = Runs.T0;
    private Map<String, String> overrides = Map.of();
    private Instant scheduleTime;
    private String idempotencyKey;
    private Long version;
    private final List<UnaryOperator<RunRecord>> steps = new ArrayList<>();

    RunBuilder(String job) {
        this.job = job;
    }

    public RunBuilder id(RunId runId) {
        this.id = runId;
        return this;
    }

    public RunBuilder workspace(String name) {
        this.workspace = name;
        return this;
    }

    public RunBuilder jobVersion(long value) {
        this.jobVersion = value;
        return this;
    }

    /** The effective spec (default: {@code aJob(job).workspace(workspace).spec()}). */
    public RunBuilder spec(JobSpec jobSpec) {
        this.spec = jobSpec;
        return this;
    }

    public RunBuilder spec(JobBuilder jobSpec) {
        return spec(jobSpec.spec());
    }

    public RunBuilder createdAt(Instant at) {
        this.createdAt = at;
        return this;
    }

    public RunBuilder overrides(Map<String, String> given) {
        this.overrides = given;
        return this;
    }

    /** Started by a schedule for this due time (its reason is then {@code Scheduled}). */
    public RunBuilder scheduledFor(Instant due) {
        this.scheduleTime = due;
        return this;
    }

    public RunBuilder idempotencyKey(String key) {
        this.idempotencyKey = key;
        return this;
    }

    /** The version the record says it was read at (default: 0 for a new run, as {@code Store.createRun} expects). */
    public RunBuilder version(long value) {
        this.version = value;
        return this;
    }

    /** Admitted at {@code at}, on its quota's guarantee or on idle capacity (STARTING). */
    public RunBuilder admitted(RealTimeResources where, Instant at) {
        return then(r -> r.admitted(where, "Admitted", at));
    }

    /** Admitted on its quota (unless it was admitted already) and RUNNING from {@code at}. */
    public RunBuilder running(Instant at) {
        return then(r -> (r.state() == RunState.QUEUED ? r.admitted(RealTimeResources.InQuota, "Admitted", at) : r)
                .moveTo(RunState.RUNNING, "AllInstancesRunning", at));
    }

    /** Ended in {@code finalState} at {@code at}, straight from where it is (a queued run is cancelled, say). */
    public RunBuilder finished(RunState finalState, String why, Instant at) {
        return then(r -> r.moveTo(finalState, why, at));
    }

    public RunBuilder faults(FaultState faults) {
        return then(r -> r.withFaults(faults));
    }

    /** Any other step, through {@link RunRecord}'s own moves: {@code then(r -> r.preempting(owner, "Reclaimed"))}. */
    public RunBuilder then(UnaryOperator<RunRecord> step) {
        steps.add(step);
        return this;
    }

    public RunRecord build() {
        JobSpec effective = spec != null ? spec : aJob(job).workspace(workspace).spec();
        RunOrigin origin = new RunOrigin(overrides, scheduleTime, idempotencyKey);
        RunRecord run = RunRecord.queued(id != null ? id : RunId.newFor(job), workspace, job, jobVersion, effective, origin, createdAt);
        for (UnaryOperator<RunRecord> step : steps) {
            run = step.apply(run);
        }
        return version == null ? run : run.withVersion(version);
    }
}
