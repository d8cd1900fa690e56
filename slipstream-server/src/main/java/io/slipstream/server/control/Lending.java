package io.slipstream.server.control;

import io.slipstream.api.run.QuotaId;
import io.slipstream.api.spec.Resources;
import io.slipstream.model.usage.UsageChange;
import io.slipstream.scheduler.ClusterSnapshot;
import io.slipstream.scheduler.QuotaLedger;
import io.slipstream.store.Store;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Keeps the usage record of what each quota lends (its unused guarantee that borrowers of its pool hold, as
 * {@link QuotaLedger} counts it) up to date: each cycle, the quotas whose figure changed get a new lent segment.
 * What was recorded last is read from the store when this replica starts to lead, and again after a failed write.
 */
final class Lending {
    private final Store store;
    private Map<QuotaId, Resources> recorded;

    Lending(Store store) {
        this.store = store;
    }

    /** Records what {@code snapshot} says each quota lends ({@code null}: nothing runs, so nothing is lent). */
    void record(ClusterSnapshot snapshot, Instant now) {
        // What a quota lends is what borrowers hold of it, whatever waits: the ledger of the queue too cost a twentieth
        // of a cycle with 100,000 queued.
        Map<QuotaId, Resources> lent = snapshot == null ? Map.of()
                : lentOf(QuotaLedger.of(new ClusterSnapshot(snapshot.nodes(), snapshot.quotas(), snapshot.active(), List.of())));
        if (recorded == null) {
            recorded = store.usage().lending();
        }
        List<UsageChange> changes = changes(recorded, lent, now);
        if (changes.isEmpty()) {
            return;
        }
        try {
            store.commit(tx -> tx.recordUsage(changes));
            recorded = lent;
        } catch (RuntimeException e) {
            recorded = null; // it may or may not have been written: read it again next time
            throw e;
        }
    }

    /** The quotas that lend anything, with what (GPUs and CPU: what accounting counts). */
    static Map<QuotaId, Resources> lentOf(QuotaLedger ledger) {
        Map<QuotaId, Resources> lent = new TreeMap<>();
        for (QuotaLedger.QuotaLine line : ledger.quotas()) {
            if (line.lent().gpu() > 0 || line.lent().milliCpu() > 0) {
                lent.put(line.quota(), new Resources(line.lent().milliCpu(), 0, line.lent().gpu(), null));
            }
        }
        return lent;
    }

    /** A change for each quota whose lent amount differs (one no longer lending gets zero). */
    static List<UsageChange> changes(Map<QuotaId, Resources> recorded, Map<QuotaId, Resources> lent, Instant now) {
        TreeSet<QuotaId> quotas = new TreeSet<>(recorded.keySet());
        quotas.addAll(lent.keySet());
        List<UsageChange> changes = new ArrayList<>();
        for (QuotaId quota : quotas) {
            Resources was = recorded.getOrDefault(quota, Resources.NONE);
            Resources is = lent.getOrDefault(quota, Resources.NONE);
            if (was.gpu() != is.gpu() || was.milliCpu() != is.milliCpu()) {
                changes.add(new UsageChange.Lent(quota, is.gpu(), is.milliCpu(), now));
            }
        }
        return changes;
    }
}
