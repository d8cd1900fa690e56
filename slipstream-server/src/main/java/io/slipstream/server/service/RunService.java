package io.slipstream.server.service;

import io.slipstream.api.problem.InvalidInputException;
import io.slipstream.api.problem.Problems;
import io.slipstream.api.run.RunId;
import io.slipstream.api.run.RunState;
import io.slipstream.api.spec.Document;
import io.slipstream.api.spec.Kind;
import io.slipstream.api.spec.SpecReader;
import io.slipstream.api.wire.RunView;
import io.slipstream.server.api.ApiException;
import io.slipstream.server.auth.Principal;
import io.slipstream.server.control.LeaderElection;
import io.slipstream.server.control.RunFactory;
import io.slipstream.server.control.RunFeasibility;
import io.slipstream.executor.NodeInfo;
import io.slipstream.scheduler.Decision;
import io.slipstream.store.ConflictException;
import io.slipstream.model.EventType;
import io.slipstream.model.RunEvent;
import io.slipstream.model.RunOrigin;
import io.slipstream.store.RunQuery;
import io.slipstream.model.RunRecord;
import io.slipstream.store.Store;
import io.slipstream.store.StoredDocument;
import io.slipstream.store.StoreReads;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import tools.jackson.databind.JsonNode;

/** Creates, finds, lists and cancels runs on behalf of a caller, who sees only the runs of its workspaces. */
public final class RunService {
    private static final int MAX_CONFLICT_RETRIES = 20;

    /** How long an idempotency key names the run it created. */
    public static final Duration IDEMPOTENCY_WINDOW = Duration.ofHours(24);
    private static final int MAX_KEY_LENGTH = 255;

    private final Store store;
    private final DocumentService documents;
    private final LeaderElection loop;
    private final RunFactory runFactory;
    private final Clock clock;
    private final Supplier<List<NodeInfo>> nodes;
    private final boolean nodesMayGrow;

    /**
     * @param nodes        the cluster's nodes: a new run that could not start even on all of them idle is refused (or,
     *                     when {@code nodesMayGrow}, accepted with a warning), one the quotas keep from ever starting is
     *                     accepted with a warning (quotas may change)
     */
    public RunService(Store store, DocumentService documents, LeaderElection loop, RunFactory runFactory, Clock clock,
                      Supplier<List<NodeInfo>> nodes, boolean nodesMayGrow) {
        this.nodes = nodes;
        this.nodesMayGrow = nodesMayGrow;
        this.store = store;
        this.documents = documents;
        this.loop = loop;
        this.runFactory = runFactory;
        this.clock = clock;
    }

    /**
     * A created run, or with {@code replayed} the run an earlier request with the same idempotency key created;
     * {@code warnings}: why it cannot start as the cluster and quotas are now (it waits until they change).
     */
    public record Created(RunRecord run, boolean replayed, List<String> warnings) {
        public Created {
            warnings = List.copyOf(warnings);
        }

        Created(RunRecord run, boolean replayed) {
            this(run, replayed, List.of());
        }
    }

    /**
     * Runs a job applied earlier, with per-run overrides ({@code path=value}) and labels (on top of the job's).
     *
     * @param idempotencyKey {@code null}, or a key that makes repeating the request within 24 hours return the same run
     */
    public Created create(Principal caller, String workspace, String job, Map<String, String> overrides, Map<String, String> labels,
            String idempotencyKey) {
        Problems problems = new Problems();
        if (workspace == null) {
            problems.add("workspace", "is required");
        }
        if (job == null) {
            problems.add("job", "is required");
        }
        checkKey(idempotencyKey, problems);
        problems.throwIfAny("the request is invalid");
        StoredDocument stored = documents.get(caller, Kind.Job, workspace, job);
        RunOrigin origin = new RunOrigin(overrides, null, idempotencyKey, caller.user(), labels);
        AtomicReference<Decision.Wait> waits = new AtomicReference<>();
        Created created = idempotently(workspace, job, origin, () -> store.write(tx -> feasible(tx, runFactory.create(tx, stored, origin), waits)));
        loop.wakeUp();
        return withWarning(created, waits.get());
    }

    /**
     * Applies a Job document, with {@code others} (its workspace, quota, secrets: no Job), and runs it, in one
     * transaction: either all of it happens or none.
     */
    public Created submit(Principal caller, JsonNode jobDocument, List<JsonNode> others, Map<String, String> overrides, Map<String, String> labels,
                          String idempotencyKey) {
        Problems problems = new Problems();
        checkKey(idempotencyKey, problems);
        List<Document<?>> all = new java.util.ArrayList<>();
        for (int i = 0; i < others.size(); i++) {
            Document<?> other = SpecReader.read(others.get(i), SpecReader.Mode.USER, "documents[" + i + "].", problems);
            if (other != null && other.kind() == Kind.Job) {
                problems.add("documents[" + i + "].kind", "the run's Job goes in jobDocument; no other Job is applied with it");
            }
            all.add(other);
        }
        Document<?> document = SpecReader.read(jobDocument, SpecReader.Mode.USER, "jobDocument.", problems);
        problems.throwIfAny("the job document is invalid");
        if (document.kind() != Kind.Job) {
            throw new InvalidInputException("jobDocument.kind", "must be Job to be run (is " + document.kind() + ")");
        }
        all.add(document);
        RunOrigin origin = new RunOrigin(overrides, null, idempotencyKey, caller.user(), labels);
        AtomicReference<Decision.Wait> waits = new AtomicReference<>();
        Created created = idempotently(caller.canAccess(document.workspace()) ? document.workspace() : null, document.name(), origin,
                () -> store.write(tx -> {
                    documents.apply(tx, caller, all);
                    StoredDocument stored = tx.documents().get(Kind.Job, document.workspace(), document.name()).orElseThrow();
                    return feasible(tx, runFactory.create(tx, stored, origin), waits);
                }));
        loop.wakeUp();
        return withWarning(created, waits.get());
    }

    private static void checkKey(String key, Problems problems) {
        if (key == null) {
            return;
        }
        if (key.isEmpty() || key.length() > MAX_KEY_LENGTH || !key.chars().allMatch(c -> c > 0x20 && c < 0x7f)) {
            problems.add("Idempotency-Key", "must be 1 to " + MAX_KEY_LENGTH + " visible ASCII characters (a UUID, say)");
        }
    }

    /**
     * Refuses (and so rolls back) a run that no node could ever hold, on nodes that do not grow: it would wait forever.
     * The spec is the run's own, overrides applied and shapes resolved. Why an accepted run would wait even on an idle
     * cluster goes to {@code waits}, once: its warning.
     */
    private RunRecord feasible(StoreReads tx, RunRecord run, AtomicReference<Decision.Wait> waits) {
        Optional<Decision.Wait> never = RunFeasibility.onAnIdleCluster(run, nodes.get(), tx.documents().list(Kind.Quota, null),
                io.slipstream.server.control.ClusterTopology.placed(run.spec()) ? io.slipstream.server.control.ClusterTopology.read(tx) : null);
        waits.set(never.orElse(null));
        if (never.isPresent() && RunFeasibility.neverOnTheseNodes(never.get()) && !nodesMayGrow) {
            String largest = nodes.get().stream()
                    .max(java.util.Comparator.comparingInt((NodeInfo n) -> n.capacity().gpu()).thenComparingLong(n -> n.capacity().milliCpu())
                            .thenComparingLong(n -> n.capacity().memoryBytes()))
                    .map(n -> "; the largest of the " + nodes.get().size() + " nodes, " + n.name() + ", has " + n.capacity()).orElse("; there are no nodes");
            throw new InvalidInputException("spec.nodeGroups", "this run could never start: " + never.get().message() + largest);
        }
        return run;
    }

    /** A new run that waits even on an idle cluster gets the scheduler's reason as a warning (a replay gets none). */
    private static Created withWarning(Created created, Decision.Wait wait) {
        if (created.replayed() || wait == null) {
            return created;
        }
        return new Created(created.run(), false, List.of("this run cannot start even with the whole cluster idle, until nodes or quotas"
                + " change (" + wait.reason() + "): " + wait.message()));
    }

    /**
     * Creates the run unless a run with the same key exists in the workspace: then that run is the answer. Two
     * concurrent requests with one key race on a unique index; the loser finds the winner's run.
     *
     * @param workspace where the key is looked up; {@code null} when the caller may not see the workspace (it fails)
     */
    private Created idempotently(String workspace, String job, RunOrigin origin, Supplier<RunRecord> create) {
        String key = origin.idempotencyKey();
        if (key == null || workspace == null) {
            return new Created(create.get(), false);
        }
        ApiException documentConflict = null;
        for (int attempt = 0; attempt < MAX_CONFLICT_RETRIES; attempt++) {
            Optional<RunRecord> existing = store.runs().byIdempotencyKey(workspace, key);
            if (existing.isEmpty() && documentConflict != null) {
                throw documentConflict; // not a duplicate's doing: the document itself conflicts
            }
            if (existing.isPresent()) {
                RunRecord run = existing.get();
                if (run.createdAt().plus(IDEMPOTENCY_WINDOW).isAfter(clock.instant())) {
                    if (!run.job().equals(job) || !run.origin().overrides().equals(origin.overrides())) {
                        throw new ApiException(422, "IDEMPOTENCY_KEY_REUSED", "Idempotency-Key " + key + " was used for a different request (run "
                                + run.id() + " of job " + run.job() + "); use a new key for a new request");
                    }
                    return new Created(run, true);
                }
                store.commit(tx -> tx.releaseIdempotencyKey(run.id())); // expired: the key is free again
            }
            try {
                return new Created(create.get(), false);
            } catch (ConflictException e) {
                // A concurrent request with the same key won: the next look finds its run.
            } catch (ApiException e) {
                if (e.status() != 409) {
                    throw e;
                }
                documentConflict = e; // a concurrent submit of the same document conflicts on the document too
            }
        }
        throw ApiException.conflict("a run with Idempotency-Key " + key + " kept changing; try again");
    }

    /** A run the caller may see, or 404 (also for runs of other workspaces: their existence is not revealed). */
    public RunRecord get(Principal caller, String id) {
        if (!RunId.isValid(id)) {
            throw ApiException.notFound("run " + id + " not found");
        }
        Optional<RunRecord> run;
        try {
            run = store.runs().get(new RunId(id));
        } catch (io.slipstream.store.UnreadableRecordException e) {
            if (e.workspace() != null && caller.canAccess(e.workspace())) {
                throw e; // a 409 that names it and says why
            }
            run = Optional.empty();
        }
        return run.filter(r -> caller.canAccess(r.workspace()))
                .orElseThrow(() -> ApiException.notFound("run " + id + " not found"));
    }

    /**
     * Records the progress an instance of the run's current attempt reports through the API (where the executor cannot
     * read its progress file). Only the run's own token (and admins) may: progress decides how much work counts lost.
     */
    public void reportProgress(Principal caller, String runId, String rank, io.slipstream.executor.Activity.Progress progress) {
        RunRecord run = get(caller, runId);
        if (!caller.admin() && !run.id().value().equals(caller.run())) {
            throw ApiException.forbidden("only the run's own token (SLIPSTREAM_RUN_TOKEN) reports its instances' progress");
        }
        io.slipstream.model.InstanceRecord instance = store.runs().instancesOf(run.id()).stream()
                .filter(i -> i.id().attempt() == run.attempt() && Integer.toString(i.id().rank()).equals(rank))
                .findFirst()
                .orElseThrow(() -> ApiException.notFound("run " + runId + " has no instance of rank " + rank + " in attempt " + run.attempt()));
        if (instance.state().isFinal()) {
            throw ApiException.conflict("instance " + instance.displayName() + " of run " + runId + " is " + instance.state() + ": it reports no more");
        }
        loop.progressReports().record(instance.id(), progress);
    }

    /** A page of the runs the caller may see, those whose stored record cannot be read among them (so that they are seen). */
    public List<io.slipstream.store.RunRow> list(Principal caller, String workspace, String job, Set<RunState> states, Instant since, Instant until,
            io.slipstream.api.label.LabelSelector selector, int limit, RunQuery.Cursor before) {
        return store.runs().rows(new RunQuery(caller.visibleWorkspaces(), workspace, job, states, since, until, selector, limit, before));
    }

    /** The outcome of a cancel request: the run, whether this call changed anything, and a sentence saying what. */
    public record CancelOutcome(RunRecord run, boolean accepted, String message) {
    }

    /**
     * Records that the run must be cancelled; the control loop stops its instances and marks it CANCELLED once they
     * are gone. Idempotent; a finished run is left alone and says so.
     */
    public CancelOutcome cancel(Principal caller, String id) {
        RunRecord run = get(caller, id);
        for (int attempt = 0; attempt < MAX_CONFLICT_RETRIES; attempt++) {
            if (run.state().isFinal()) {
                return new CancelOutcome(run, false, "run " + id + " already finished (" + run.state() + "); nothing to cancel");
            }
            if (run.cancelRequestedAt() != null) {
                return new CancelOutcome(run, false, "run " + id + " is already being cancelled");
            }
            Instant now = clock.instant();
            RunRecord requested = run.withCancelRequestedAt(now);
            try {
                RunRecord stored = store.write(tx -> {
                    RunRecord updated = tx.updateRun(requested);
                    tx.appendEvent(RunEvent.of(updated.id(), now, EventType.CancelRequested, updated.state().name(), "CancelRequested",
                            "by " + caller.user(), null));
                    return updated;
                });
                loop.wakeUp();
                return new CancelOutcome(stored, true, "cancelling run " + id);
            } catch (ConflictException e) {
                run = get(caller, id); // the control loop moved it meanwhile: look again
            }
        }
        throw ApiException.conflict("run " + id + " kept changing; try again");
    }

    public List<RunEvent> events(Principal caller, String id, long after, int limit) {
        RunRecord run = get(caller, id);
        return store.runs().events(run.id(), after, limit);
    }

    public RunView.QueueView queueOf(RunRecord run) {
        return run.state() == RunState.QUEUED ? loop.queueStatus().of(run.id()) : null;
    }
}
