package io.slipstream.server.control;

import io.slipstream.model.usage.UsageChanges;
import io.slipstream.api.problem.InvalidInputException;
import io.slipstream.api.problem.Problems;
import io.slipstream.api.run.RunId;
import io.slipstream.api.run.RunState;
import io.slipstream.api.spec.Document;
import io.slipstream.api.spec.JobSpec;
import io.slipstream.api.spec.Kind;
import io.slipstream.api.spec.NodeGroupSpec;
import io.slipstream.api.spec.Overrides;
import io.slipstream.api.spec.ShapeSpec;
import io.slipstream.server.config.RunLimits;
import io.slipstream.model.EventType;
import io.slipstream.model.RunEvent;
import io.slipstream.model.RunOrigin;
import io.slipstream.model.RunRecord;
import io.slipstream.store.Store;
import io.slipstream.store.StoredDocument;
import io.slipstream.store.StoreTx;
import io.slipstream.store.StoreReads;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * Makes the queued run of a job version: its overrides applied, its shapes resolved, the result checked like any job,
 * its labels the job's with the run's own on top. The run keeps this effective spec and these labels, so later edits
 * of the job or of its shapes never change a run.
 */
public final class RunFactory {
    private final Clock clock;
    private final RunLimits limits;
    private final boolean restartsInPlace;
    private final ExecutorRefusals refusals;

    public RunFactory(Clock clock, RunLimits limits) {
        this(clock, limits, true);
    }

    /**
     * @param restartsInPlace whether the executor restarts one instance in place: else a run that is {@code runType:
     *                        Async} (its overrides make it so, or its job was applied under another executor) is refused
     */
    public RunFactory(Clock clock, RunLimits limits, boolean restartsInPlace) {
        this(clock, limits, restartsInPlace, ExecutorRefusals.NONE);
    }

    /**
     * @param refusals what of a job the executor cannot run, by field below {@code spec} ({@code Executor#refusals}):
     *                 checked again for a run with overrides, which may ask for what the job did not; and what of the
     *                 run's labels, with its job's, it refuses
     */
    public RunFactory(Clock clock, RunLimits limits, boolean restartsInPlace, ExecutorRefusals refusals) {
        this.clock = clock;
        this.limits = limits;
        this.restartsInPlace = restartsInPlace;
        this.refusals = refusals;
    }

    /**
     * Stores the new run, and its first event, in {@code tx}.
     *
     * @throws InvalidInputException if the overrides do not apply, or the job with them is invalid
     */
    @SuppressWarnings("unchecked")
    public RunRecord create(StoreTx tx, StoredDocument job, RunOrigin given) {
        Document<JobSpec> document = (Document<JobSpec>) job.document();
        RunOrigin origin = given.withLabels(io.slipstream.api.label.Labels.merged(document.metadata().labels(), given.labels()));
        if (origin.labels().size() > io.slipstream.api.label.Labels.MAX_LABELS) {
            throw new InvalidInputException("labels", "the run would have " + origin.labels().size() + " labels with its job's, at most "
                    + io.slipstream.api.label.Labels.MAX_LABELS + " are allowed");
        }
        JobSpec spec = document.spec();
        if (!origin.overrides().isEmpty()) {
            spec = Overrides.apply(new Document<>(document.metadata(), resolveShapesUnderOverrides(tx, spec, origin)), origin.overrides());
            Problems limitProblems = new Problems();
            limits.check(spec, "spec.", limitProblems);
            checkRunType(spec, limitProblems);
            // An override may name a placement level (nodeGroups.worker.placement.level=zone): one the topology has.
            if (ClusterTopology.placed(spec)) {
                ClusterTopology.read(tx).placementProblems(spec).forEach((field, why) -> limitProblems.add("spec." + field, why));
            }
            Problems problems = new Problems();
            for (var problem : limitProblems.list()) {
                problems.add("overrides." + Overrides.keyFor(problem.field(), spec, origin.overrides()), problem.message());
            }
            if (spec.quota() != null && tx.documents().get(Kind.Quota, document.workspace(), spec.quota()).isEmpty()) {
                problems.add("overrides.quota", "workspace '" + document.workspace() + "' has no quota '" + spec.quota() + "'");
            }
            problems.throwIfAny("the job with these overrides is invalid");
        }
        if (origin.overrides().isEmpty()) {
            Problems problems = new Problems();
            checkRunType(spec, problems); // applied when the server's executor could (a store moved to another)
            problems.throwIfAny("the job is invalid");
        }
        spec = effectiveSpec(tx, spec);
        checkResolved(spec, origin);
        checkLabels(spec, origin, given);
        checkSecretReferences(tx, document.workspace(), spec, origin);
        Instant now = clock.instant();
        RunRecord run = RunRecord.queued(RunId.newFor(document.name()), document.workspace(), document.name(), job.version(), spec, origin, now);
        RunRecord created = tx.createRun(run, RunEvent.of(run.id(), now, EventType.StateChanged, RunState.QUEUED.name(), run.reason(), describe(job, origin), null));
        tx.recordUsage(UsageChanges.between(null, created, now));
        return created;
    }

    private void checkRunType(JobSpec spec, Problems problems) {
        InPlaceRestarts.check(spec, restartsInPlace, "", problems);
    }

    /**
     * What only the effective spec shows: a memory limit below its shape's memory now (the shape may have changed since
     * the job was applied, or an override set the limit), and, for a run with overrides, what the executor refuses of
     * it. Named by the override that caused it, else by the spec's field.
     */
    private void checkResolved(JobSpec spec, RunOrigin origin) {
        Problems found = new Problems();
        for (int i = 0; i < spec.nodeGroups().size(); i++) {
            String problem = spec.nodeGroups().get(i).memoryLimitProblem();
            if (problem != null) {
                found.add("spec.nodeGroups[" + i + "].limits.memory", problem);
            }
        }
        if (!origin.overrides().isEmpty()) {
            refusals.ofJob(spec).forEach((field, why) -> found.add("spec." + field, why));
        }
        throwNamedByOverrides(found, spec, origin, origin.overrides().isEmpty() ? "the job is invalid" : "the job with these overrides is invalid");
    }

    /** What the executor refuses of the run's labels: named as the run's own ({@code labels.KEY}) or its job's ({@code metadata.labels.KEY}). */
    private void checkLabels(JobSpec spec, RunOrigin origin, RunOrigin given) {
        Problems problems = new Problems();
        refusals.ofLabels(origin.labels(), limits.maxRuntimeOf(spec)).forEach((key, why) -> problems.add(
                given.labels().containsKey(key) ? "labels." + key : "metadata.labels." + key, why));
        problems.throwIfAny("the run's labels are invalid");
    }

    /**
     * Every Secret and key the run refers to exists now (values are read at launch): a reference that went away since
     * the job was applied, or that an override adds, is refused here, named by its field or override.
     */
    private static void checkSecretReferences(StoreReads tx, String workspace, JobSpec spec, RunOrigin origin) {
        Problems found = new Problems();
        io.slipstream.server.secret.SecretReferences.check(tx, workspace, spec, "spec.", found);
        throwNamedByOverrides(found, spec, origin, "the run refers to secrets that do not exist");
    }

    /** Throws {@code found} (if any), each problem named by the override that caused it, or by its field in the spec. */
    private static void throwNamedByOverrides(Problems found, JobSpec spec, RunOrigin origin, String message) {
        if (found.isEmpty()) {
            return;
        }
        Problems problems = new Problems();
        for (var problem : found.list()) {
            String key = Overrides.keyFor(problem.field(), spec, origin.overrides());
            problems.add(origin.overrides().containsKey(key) ? "overrides." + key : problem.field(), problem.message());
        }
        problems.throwIfAny(message);
    }

    /**
     * A group sized by a shape, whose resources an override changes ({@code nodeGroups.worker.resources.gpu=2}), starts
     * from the shape's resources: the override changes one of them, the others stay as the shape has them.
     */
    private static JobSpec resolveShapesUnderOverrides(StoreReads tx, JobSpec spec, RunOrigin origin) {
        List<NodeGroupSpec> groups = new ArrayList<>();
        for (NodeGroupSpec group : spec.nodeGroups()) {
            String prefix = "nodeGroups." + group.name() + ".resources.";
            boolean touched = origin.overrides().keySet().stream().anyMatch(key -> key.startsWith(prefix));
            Optional<StoredDocument> shape = group.shape() == null ? Optional.empty() : tx.documents().get(Kind.Shape, null, group.shape());
            if (touched && shape.isPresent()) {
                group = group.withResourcesInsteadOfShape(((ShapeSpec) shape.get().document().spec()).resources());
            }
            groups.add(group);
        }
        return spec.withNodeGroups(groups);
    }

    private static String describe(StoredDocument job, RunOrigin origin) {
        StringBuilder text = new StringBuilder("job version " + job.version());
        if (!origin.overrides().isEmpty()) {
            text.append(" with ").append(origin.overrides().entrySet().stream().map(e -> e.getKey() + "=" + e.getValue())
                    .collect(Collectors.joining(" ")));
        }
        if (origin.scheduleTime() != null) {
            text.append(", scheduled for ").append(origin.scheduleTime());
        }
        return text.toString();
    }

    /** The job's spec as a run will execute it: every shape replaced by its resources. */
    static JobSpec effectiveSpec(StoreReads tx, JobSpec job) {
        List<NodeGroupSpec> groups = new ArrayList<>();
        for (int i = 0; i < job.nodeGroups().size(); i++) {
            NodeGroupSpec group = job.nodeGroups().get(i);
            if (group.shape() != null) {
                Optional<StoredDocument> shape = tx.documents().get(Kind.Shape, null, group.shape());
                if (shape.isEmpty()) {
                    throw new InvalidInputException("spec.nodeGroups[" + i + "].shape", "unknown shape '" + group.shape() + "'");
                }
                group = group.withResources(((ShapeSpec) shape.get().document().spec()).resources());
            }
            groups.add(group);
        }
        return job.withNodeGroups(groups);
    }
}
