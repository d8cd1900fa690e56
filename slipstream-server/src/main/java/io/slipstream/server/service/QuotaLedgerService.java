package io.slipstream.server.service;

import io.slipstream.api.run.QuotaId;
import io.slipstream.api.run.RunId;
import io.slipstream.api.spec.Kind;
import io.slipstream.api.wire.PendingRunView;
import io.slipstream.api.wire.PoolView;
import io.slipstream.api.wire.QuotaStatusView;
import io.slipstream.api.wire.ResourcesView;
import io.slipstream.api.wire.RunView;
import io.slipstream.executor.NodeInfo;
import io.slipstream.model.RunRecord;
import io.slipstream.api.spec.QuotaSpec;
import io.slipstream.scheduler.ClusterSnapshot;
import io.slipstream.scheduler.InstanceRequest;
import io.slipstream.scheduler.PendingRun;
import io.slipstream.scheduler.QuotaLedger;
import io.slipstream.scheduler.QuotaState;
import io.slipstream.scheduler.Scheduler;
import io.slipstream.server.auth.Principal;
import io.slipstream.server.control.LiveSnapshot;
import io.slipstream.store.Store;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.stream.Collectors;

/**
 * Live quota figures for the API: used, borrowed, lent and pending per quota and pool ({@link QuotaLedger}), and each
 * quota's queue in order. Read from the store, so every replica answers the same; only why a run waits comes from
 * the leading replica's last cycle.
 */
public final class QuotaLedgerService {
    private final Store store;
    private final Supplier<List<NodeInfo>> nodes;
    private final Function<RunId, RunView.QueueView> queue;
    private final DocumentService documents;

    /** @param queue why a queued run waits, as the last cycle saw it ({@code null}: not seen, e.g. on a standby) */
    public QuotaLedgerService(Store store, Supplier<List<NodeInfo>> nodes, Function<RunId, RunView.QueueView> queue, DocumentService documents) {
        this.store = store;
        this.nodes = nodes;
        this.queue = queue;
        this.documents = documents;
    }

    public QuotaLedger ledger() {
        return QuotaLedger.of(LiveSnapshot.read(store, nodes.get()).snapshot());
    }

    /**
     * Each quota's sharing pool now, from the quota documents alone, by the ledger's own rules: what the usage charts
     * name a quota's pool by, without the runs, instances and nodes a whole ledger reads.
     */
    public Map<QuotaId, String> pools() {
        List<QuotaState> quotas = store.documents().list(Kind.Quota, null).stream()
                .map(stored -> QuotaState.of(stored.document().workspace(), stored.document().name(), (QuotaSpec) stored.document().spec())).toList();
        Map<QuotaId, String> pools = new TreeMap<>();
        QuotaLedger.of(new ClusterSnapshot(List.of(), quotas, List.of(), List.of())).quotas().forEach(q -> pools.put(q.quota(), q.pool()));
        return pools;
    }

    /** The quota's live figures ({@code null} for one the ledger was read without: created just after). */
    public static QuotaStatusView statusOf(QuotaLedger ledger, QuotaId quota) {
        return ledger.quota(quota).map(QuotaLedgerService::view).orElse(null);
    }

    private static QuotaStatusView view(QuotaLedger.QuotaLine line) {
        return new QuotaStatusView(line.pool(), ResourcesView.of(line.guaranteed()), ResourcesView.of(line.ownGuarantee()),
                line.max() == null ? null : ResourcesView.of(line.max()), ResourcesView.of(line.used()), ResourcesView.of(line.inQuota()),
                ResourcesView.of(line.borrowed()), ResourcesView.of(line.lent()), ResourcesView.of(line.pending()), line.admittedRuns(),
                line.pendingRuns(), QuotaStatusView.shareOf(line.weightedShare()), QuotaStatusView.shareOf(line.fairShare()), line.subtreeUsed() == null ? null : ResourcesView.of(line.subtreeUsed()));
    }

    /**
     * The pools the caller has a quota in (admins: all), and the pool of runs without a quota (everyone may run there).
     * Pool figures are sums over teams: no run of another workspace is named.
     */
    public List<PoolView> pools(Principal caller) {
        QuotaLedger ledger = ledger();
        Set<String> visible = ledger.quotas().stream().filter(q -> caller.canAccess(q.quota().workspace())).map(QuotaLedger.QuotaLine::pool)
                .collect(Collectors.toSet());
        return ledger.pools().stream().filter(p -> caller.admin() || visible.contains(p.pool()) || p.pool().equals(QuotaLedger.NO_QUOTA_POOL))
                .map(p -> new PoolView(p.pool(), ResourcesView.of(p.guaranteed()), ResourcesView.of(p.lendable()), ResourcesView.of(p.used()),
                        ResourcesView.of(p.inQuota()), ResourcesView.of(p.borrowed()), ResourcesView.of(p.lent()), ResourcesView.of(p.pending()),
                        p.admittedRuns(), p.pendingRuns(), ledger.quotas().stream()
                                // Another team's share is its own business, as in a run's wait reason: the caller's quotas only.
                                .filter(q -> q.pool().equals(p.pool()) && caller.canAccess(q.quota().workspace()))
                                .map(q -> new PoolView.Share(q.quota().toString(), q.weight(), QuotaStatusView.shareOf(q.weightedShare()),
                                        QuotaStatusView.shareOf(q.fairShare())))
                                .toList()))
                .toList();
    }

    /** The quota's queued runs in queue order (404 if the caller may not see the quota, as for the quota itself). */
    public List<PendingRunView> pending(Principal caller, String workspace, String name) {
        documents.get(caller, Kind.Quota, workspace, name);
        QuotaId quota = new QuotaId(workspace, name);
        LiveSnapshot live = LiveSnapshot.read(store, nodes.get());
        return live.snapshot().pending().stream().filter(run -> quota.equals(run.quota())).sorted(Scheduler.QUEUE_ORDER)
                .map(run -> pendingView(run, live.runs().get(run.id()))).toList();
    }

    private PendingRunView pendingView(PendingRun pending, RunRecord run) {
        io.slipstream.api.spec.Resources asked = io.slipstream.api.spec.Resources.NONE;
        for (InstanceRequest instance : pending.instances()) {
            asked = asked.plus(instance.resources());
        }
        RunView.QueueView why = queue.apply(run.id());
        return new PendingRunView(run.id().value(), run.job(), run.priority(), run.createdAt().toString(), ResourcesView.of(asked),
                pending.idleMode().name(), why == null ? null : why.position(), why == null ? null : why.reason(), why == null ? null : why.message());
    }
}
