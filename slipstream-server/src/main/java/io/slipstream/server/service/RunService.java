package io.slipstream.server.service;

import io.slipstream.api.problem.InvalidInputException;
import io.slipstream.api.problem.Problems;
import io.slipstream.api.run.RunId;
import io.slipstream.api.run.RunState;
import io.slipstream.api.spec.Document;
import io.slipstream.api.spec.JobSpec;
import io.slipstream.api.spec.Kind;
import io.slipstream.api.spec.SpecReader;
import io.slipstream.api.wire.RunView;
import io.slipstream.server.api.ApiException;
import io.slipstream.server.auth.Principal;
import io.slipstream.server.control.ControlLoop;
import io.slipstream.store.ConflictException;
import io.slipstream.store.RunEvent;
import io.slipstream.store.RunQuery;
import io.slipstream.store.RunRecord;
import io.slipstream.store.Store;
import io.slipstream.store.StoredDocument;
import java.time.Clock;
import java.time.Instant;
import java.util.List;
import java.util.Set;
import tools.jackson.databind.JsonNode;

/** Creates, finds, lists and cancels runs on behalf of a caller, who sees only the runs of its workspaces. */
public final class RunService {
    private static final int MAX_CONFLICT_RETRIES = 20;

    private final Store store;
    private final DocumentService documents;
    private final ControlLoop loop;
    private final Clock clock;

    public RunService(Store store, DocumentService documents, ControlLoop loop, Clock clock) {
        this.store = store;
        this.documents = documents;
        this.loop = loop;
        this.clock = clock;
    }

    /** Runs a job applied earlier. */
    public RunRecord create(Principal caller, String workspace, String job) {
        Problems problems = new Problems();
        if (workspace == null) {
            problems.add("workspace", "is required");
        }
        if (job == null) {
            problems.add("job", "is required");
        }
        problems.throwIfAny("the request is invalid");
        StoredDocument stored = documents.get(caller, Kind.Job, workspace, job);
        RunRecord run = store.inTransaction(tx -> createRun(tx, stored));
        loop.wakeUp();
        return run;
    }

    /** Applies a Job document and runs it, in one transaction: either both happen or neither. */
    public RunRecord submit(Principal caller, JsonNode jobDocument) {
        Problems problems = new Problems();
        Document<?> document = SpecReader.read(jobDocument, SpecReader.Mode.USER, "jobDocument.", problems);
        problems.throwIfAny("the job document is invalid");
        if (document.kind() != Kind.Job) {
            throw new InvalidInputException("jobDocument.kind", "must be Job to be run (is " + document.kind() + ")");
        }
        RunRecord run = store.inTransaction(tx -> {
            documents.apply(caller, List.of(document));
            StoredDocument stored = tx.getDocument(Kind.Job, document.workspace(), document.name()).orElseThrow();
            return createRun(tx, stored);
        });
        loop.wakeUp();
        return run;
    }

    private RunRecord createRun(Store tx, StoredDocument job) {
        Instant now = clock.instant();
        JobSpec spec = DocumentService.effectiveSpec(tx, (JobSpec) job.document().spec());
        RunRecord run = RunRecord.queued(RunId.newFor(job.document().name()), job.document().workspace(), job.document().name(),
                job.version(), spec, now);
        return tx.createRun(run, RunEvent.of(run.id(), now, "StateChanged", RunState.QUEUED.name(), "Submitted",
                "job version " + job.version(), null));
    }

    /** A run the caller may see, or 404 (also for runs of other workspaces: their existence is not revealed). */
    public RunRecord get(Principal caller, String id) {
        if (!RunId.isValid(id)) {
            throw ApiException.notFound("run " + id + " not found");
        }
        return store.getRun(new RunId(id))
                .filter(run -> caller.canAccess(run.workspace()))
                .orElseThrow(() -> ApiException.notFound("run " + id + " not found"));
    }

    public List<RunRecord> list(Principal caller, String workspace, String job, Set<RunState> states, int limit, RunQuery.Cursor before) {
        return store.listRuns(new RunQuery(caller.visibleWorkspaces(), workspace, job, states, limit, before));
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
                RunRecord stored = store.inTransaction(tx -> {
                    RunRecord updated = tx.updateRun(requested);
                    tx.appendEvent(RunEvent.of(updated.id(), now, "CancelRequested", updated.state().name(), "CancelRequested",
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
        return store.eventsOf(run.id(), after, limit);
    }

    public RunView.QueueView queueOf(RunRecord run) {
        return run.state() == RunState.QUEUED ? loop.queueStatus().of(run.id()) : null;
    }
}
