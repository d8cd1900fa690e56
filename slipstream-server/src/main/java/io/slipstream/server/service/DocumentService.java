package io.slipstream.server.service;

import io.slipstream.api.problem.Problems;
import io.slipstream.api.spec.Document;
import io.slipstream.api.spec.JobSpec;
import io.slipstream.api.spec.Kind;
import io.slipstream.api.spec.Names;
import io.slipstream.api.spec.NodeGroupSpec;
import io.slipstream.api.spec.ShapeSpec;
import io.slipstream.api.wire.ApplyResultView;
import io.slipstream.server.api.ApiException;
import io.slipstream.server.auth.Principal;
import io.slipstream.server.config.RunLimits;
import io.slipstream.store.ConflictException;
import io.slipstream.store.Store;
import io.slipstream.store.StoredDocument;
import io.slipstream.store.StoreTx;
import io.slipstream.store.StoreReads;
import io.slipstream.executor.NodeInfo;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;
import java.util.stream.Collectors;

/**
 * Applies, reads and deletes documents (workspaces, shapes, quotas, jobs, secrets), enforcing who may do what:
 * workspaces, shapes and quotas are the admins'; jobs and secrets belong to their workspace's members (secrets are
 * kept by {@link SecretService}, sealed). A caller never learns of objects in workspaces it is not a member of: they
 * answer "not found", and a document for such a workspace is refused before anything is looked up.
 */
public final class DocumentService {
    private final Store store;
    private final Clock clock;
    private final Supplier<List<NodeInfo>> nodes;
    private final RunLimits limits;
    private final boolean imageRequired;
    private final io.slipstream.server.control.ExecutorRefusals refusals;
    private final boolean restartsInPlace;
    private final SecretService secrets;

    /**
     * @param nodes         the cluster's nodes, to check quotas against its capacity
     * @param limits        the longest grace period and runtime a job may ask for
     * @param imageRequired whether every node group must name its container image (the executor runs containers)
     * @param secrets       where Secret documents go
     */
    public DocumentService(Store store, Clock clock, Supplier<List<NodeInfo>> nodes, RunLimits limits, boolean imageRequired,
                           SecretService secrets) {
        this(store, clock, nodes, limits, imageRequired, true, secrets);
    }

    /** @param restartsInPlace whether the executor restarts one instance in place (else {@code runType: Async} is refused) */
    public DocumentService(Store store, Clock clock, Supplier<List<NodeInfo>> nodes, RunLimits limits, boolean imageRequired,
                           boolean restartsInPlace, SecretService secrets) {
        this(store, clock, nodes, limits, imageRequired, restartsInPlace, io.slipstream.server.control.ExecutorRefusals.NONE, secrets);
    }

    /** @param refusals what of a job and of its labels the executor cannot run ({@code Executor#refusals}, {@code #labelRefusals}) */
    public DocumentService(Store store, Clock clock, Supplier<List<NodeInfo>> nodes, RunLimits limits, boolean imageRequired,
                           boolean restartsInPlace, io.slipstream.server.control.ExecutorRefusals refusals, SecretService secrets) {
        this.refusals = refusals;
        this.store = store;
        this.clock = clock;
        this.nodes = nodes;
        this.limits = limits;
        this.imageRequired = imageRequired;
        this.restartsInPlace = restartsInPlace;
        this.secrets = secrets;
    }

    /**
     * Applies documents in one transaction, after checking every one of them (against the store as it will be
     * once the earlier documents of the batch are applied). Any problem anywhere rejects the whole batch.
     */
    public List<ApplyResultView> apply(Principal caller, List<Document<?>> documents) {
        return apply(caller, documents, false);
    }

    /**
     * With {@code dryRun}: the same checks and the same answer (what would be created, updated or left unchanged,
     * and at which version), from a transaction that is rolled back, so nothing is written. The very code that
     * applies decides, so a dry run cannot drift from a real one.
     */
    public List<ApplyResultView> apply(Principal caller, List<Document<?>> documents, boolean dryRun) {
        requireAccess(caller, documents);
        try {
            return store.write(tx -> {
                List<ApplyResultView> results = applyChecked(tx, caller, documents);
                if (dryRun) {
                    throw new RolledBack(results); // an exception out of the transaction is what rolls it back
                }
                return results;
            });
        } catch (RolledBack dry) {
            return dry.results;
        } catch (ConflictException e) {
            throw ApiException.conflict(e.getMessage());
        }
    }

    /** {@link #apply(Principal, List)} in the caller's transaction {@code tx}: what it goes on to write commits with them. */
    public List<ApplyResultView> apply(StoreTx tx, Principal caller, List<Document<?>> documents) {
        requireAccess(caller, documents);
        try {
            return applyChecked(tx, caller, documents);
        } catch (ConflictException e) {
            throw ApiException.conflict(e.getMessage());
        }
    }

    private void requireAccess(Principal caller, List<Document<?>> documents) {
        Problems outside = new Problems();
        for (int i = 0; i < documents.size(); i++) {
            Document<?> document = documents.get(i);
            if (!document.kind().workspaced() || document.kind() == Kind.Quota) {
                requireAdmin(caller, document.kind());
            }
            if (document.kind().workspaced() && !caller.canAccess(document.workspace())) {
                // Before any lookup: not even a version conflict may tell that something exists there.
                outside.add((documents.size() == 1 ? "" : "documents[" + i + "].") + "metadata.workspace",
                        "workspace '" + document.workspace() + "' does not exist or you are not a member of it");
            }
        }
        outside.throwIfAny("the input refers to things that do not exist or do not fit");
    }

    private List<ApplyResultView> applyChecked(StoreTx tx, Principal caller, List<Document<?>> documents) {
        Problems problems = new Problems();
        Instant now = clock.instant();
        List<ApplyResultView> results = new ArrayList<>();
        for (Document<?> document : documents) {
            results.add(applyOne(tx, document, now));
        }
        // References are checked on the state the whole input leaves, so its documents may come in any order.
        for (int i = 0; i < documents.size(); i++) {
            check(tx, caller, documents.get(i), documents.size() == 1 ? "" : "documents[" + i + "].", problems);
        }
        problems.throwIfAny("the input refers to things that do not exist or do not fit");
        return results;
    }

    /** Carries a dry run's answer out of the transaction it rolls back. */
    private static final class RolledBack extends RuntimeException {
        final List<ApplyResultView> results;

        RolledBack(List<ApplyResultView> results) {
            super("dry run", null, false, false);
            this.results = results;
        }
    }

    /** Checks a document against the others: its workspace, the shapes and quota a job names, the rules of quotas. */
    private void check(StoreReads tx, Principal caller, Document<?> document, String prefix, Problems problems) {
        if (document.kind().workspaced()) {
            String workspace = document.workspace();
            if (!caller.canAccess(workspace) || tx.documents().get(Kind.Workspace, null, workspace).isEmpty()) {
                problems.add(prefix + "metadata.workspace", "workspace '" + workspace + "' does not exist or you are not a member of it");
                return;
            }
        }
        if (document.spec() instanceof JobSpec job) {
            checkShapes(tx, job, prefix, problems);
            TopologyRules.checkPlacements(tx, job, prefix, problems);
            if (job.quota() != null && tx.documents().get(Kind.Quota, document.workspace(), job.quota()).isEmpty()) {
                problems.add(prefix + "spec.quota", "workspace '" + document.workspace() + "' has no quota '" + job.quota() + "'");
            }
            limits.check(job, prefix + "spec.", problems);
            io.slipstream.server.secret.SecretReferences.check(tx, document.workspace(), job, prefix + "spec.", problems);
            io.slipstream.server.control.InPlaceRestarts.check(job, restartsInPlace, prefix, problems);
            if (imageRequired) {
                for (int i = 0; i < job.nodeGroups().size(); i++) {
                    if (job.nodeGroups().get(i).image() == null) {
                        problems.add(prefix + "spec.nodeGroups[" + i + "].image",
                                "is required: this server runs instances as containers (executor: kubernetes)");
                    }
                }
            }
            // The executor judges the job as it would run it: a group's shape stands for its resources.
            refusals.ofJob(withKnownShapesResolved(tx, job)).forEach((field, why) -> problems.add(prefix + "spec." + field, why));
            refusals.ofLabels(document.metadata().labels(), limits.maxRuntimeOf(job)).forEach((key, why) -> problems.add(prefix + "metadata.labels." + key, why));
        }
        if (document.kind() == Kind.Quota) {
            QuotaRules.check(tx, document.workspace(), document.name(), prefix, nodes.get(), problems);
        }
    }

    /** Every shape a job names exists, and its memory is at most the group's {@code limits.memory}. */
    private static void checkShapes(StoreReads tx, JobSpec job, String prefix, Problems problems) {
        for (int i = 0; i < job.nodeGroups().size(); i++) {
            NodeGroupSpec group = job.nodeGroups().get(i);
            if (group.shape() == null) {
                continue;
            }
            Optional<StoredDocument> shape = tx.documents().get(Kind.Shape, null, group.shape());
            if (shape.isEmpty()) {
                String known = tx.documents().list(Kind.Shape, null).stream().map(d -> d.document().name()).collect(Collectors.joining(", "));
                problems.add(prefix + "spec.nodeGroups[" + i + "].shape",
                        "unknown shape '" + group.shape() + "'" + (known.isEmpty() ? " (no shapes are defined)" : " (known: " + known + ")"));
            } else if (group.resources() == null) {
                String problem = group.withResources(((ShapeSpec) shape.get().document().spec()).resources()).memoryLimitProblem();
                if (problem != null) {
                    problems.add(prefix + "spec.nodeGroups[" + i + "].limits.memory", problem);
                }
            }
        }
    }

    /** The job with the resources of each shape it names that exists (a group whose shape does not is left as it is). */
    private static JobSpec withKnownShapesResolved(StoreReads tx, JobSpec job) {
        List<NodeGroupSpec> groups = new ArrayList<>();
        for (NodeGroupSpec group : job.nodeGroups()) {
            Optional<StoredDocument> shape = group.shape() == null || group.resources() != null ? Optional.empty()
                    : tx.documents().get(Kind.Shape, null, group.shape());
            groups.add(shape.isEmpty() ? group : group.withResources(((ShapeSpec) shape.get().document().spec()).resources()));
        }
        return job.withNodeGroups(groups);
    }

    @SuppressWarnings("unchecked")
    private ApplyResultView applyOne(StoreTx tx, Document<?> document, Instant now) {
        if (document.spec() instanceof io.slipstream.api.spec.SecretSpec) {
            return secrets.apply(tx, (Document<io.slipstream.api.spec.SecretSpec>) document, now);
        }
        Optional<StoredDocument> existing = tx.documents().get(document.kind(), document.workspace(), document.name());
        Long expected = document.metadata().version();
        if (existing.isEmpty()) {
            if (expected != null) {
                throw new ConflictException(document.reference() + " does not exist, but version " + expected + " was expected");
            }
            StoredDocument created = tx.createDocument(document, now);
            return result(document, "created", created.version());
        }
        StoredDocument current = existing.get();
        if (expected != null && expected != current.version()) {
            throw new ConflictException(document.reference() + " is at version " + current.version() + ", not " + expected
                    + ": it was changed meanwhile; read it again and reapply");
        }
        // Labels are part of what is applied: a change of labels alone is a new version (runs made after it get them).
        if (current.document().spec().equals(document.spec()) && current.document().metadata().labels().equals(document.metadata().labels())) {
            return result(document, "unchanged", current.version());
        }
        StoredDocument updated = tx.updateDocument(document, current.version(), now);
        return result(document, "updated", updated.version());
    }

    private static ApplyResultView result(Document<?> document, String action, long version) {
        return new ApplyResultView(document.kind().name(), document.workspace(), document.name(), action, version);
    }

    public StoredDocument get(Principal caller, Kind kind, String workspace, String name) {
        if (!couldExist(kind, workspace, name)) {
            throw notFound(kind, workspace, name);
        }
        if (kind.workspaced() && !caller.canAccess(workspace)) {
            throw notFound(kind, workspace, name);
        }
        if (kind == Kind.Workspace && !caller.canAccess(name)) {
            throw notFound(kind, null, name);
        }
        return store.documents().get(kind, workspace, name).orElseThrow(() -> notFound(kind, workspace, name));
    }

    public List<StoredDocument> list(Principal caller, Kind kind, String workspace) {
        if (kind == Kind.Shape || kind == Kind.Topology) {
            return store.documents().list(kind, null); // the cluster's, for everyone to read
        }
        if (workspace != null) {
            if (!caller.canAccess(workspace)) {
                return List.of();
            }
            return store.documents().list(kind, java.util.Set.of(workspace));
        }
        return store.documents().list(kind, caller.visibleWorkspaces());
    }

    public void delete(Principal caller, Kind kind, String workspace, String name) {
        StoredDocument current = get(caller, kind, workspace, name);
        if (!kind.workspaced() || kind == Kind.Quota) {
            requireAdmin(caller, kind);
        }
        try {
            store.commit(tx -> {
                if (kind == Kind.Workspace && (!tx.documents().list(Kind.Job, java.util.Set.of(name)).isEmpty()
                        || !tx.documents().list(Kind.Quota, java.util.Set.of(name)).isEmpty() || !tx.credentials().secrets(java.util.Set.of(name)).isEmpty())) {
                    throw ApiException.conflict("workspace " + name + " still has jobs, quotas or secrets: delete them first");
                }
                tx.deleteDocument(kind, workspace, name, current.version());
            });
        } catch (ConflictException e) {
            throw ApiException.conflict(e.getMessage());
        }
    }

    /** Whether an object of {@code kind} could have these names; one that could not is simply not found. */
    private static boolean couldExist(Kind kind, String workspace, String name) {
        if (kind.workspaced() && (workspace == null || Names.dnsLabelProblem(workspace) != null)) {
            return false;
        }
        return name != null && (kind == Kind.Shape ? Names.dnsSubdomainProblem(name) : Names.dnsLabelProblem(name)) == null;
    }

    private static void requireAdmin(Principal caller, Kind kind) {
        if (!caller.admin()) {
            throw ApiException.forbidden("only admins can create, change or delete a " + kind);
        }
    }

    static ApiException notFound(Kind kind, String workspace, String name) {
        return ApiException.notFound(kind + " " + (workspace == null ? "" : workspace + "/") + name + " not found");
    }
}
