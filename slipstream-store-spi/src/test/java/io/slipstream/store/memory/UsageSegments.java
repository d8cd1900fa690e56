package io.slipstream.store.memory;

import io.slipstream.api.run.QuotaId;
import io.slipstream.api.spec.Resources;
import io.slipstream.model.usage.UsageChange;
import io.slipstream.model.usage.UsageKind;
import io.slipstream.store.UsageSegment;
import io.slipstream.store.UsageStarts;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Predicate;

/** {@link InMemoryStore}'s usage segments, held as objects and added up exactly (the SPI's rules, as the JDBC store keeps them). */
final class UsageSegments {
    private UsageSegments() {
    }

    /** Applies {@code changes} in order to {@code usage}, a working copy of the segments; a queued one that a start closes is a wait. */
    static void apply(List<UsageSegment> usage, List<UsageChange> changes) {
        for (int i = 0; i < changes.size(); i++) {
            UsageChange change = changes.get(i);
            boolean starts = UsageStarts.startsRun(changes, i);
            if (change instanceof UsageChange.Closed closed) {
                closeOpen(usage, s -> closed.run().value().equals(s.run()), closed.at().toEpochMilli(), closed.lostGpuMillis(), closed.lostCpuMillis(),
                        starts);
            } else if (change instanceof UsageChange.Opened o) {
                if (!o.alongside()) {
                    closeOpen(usage, s -> o.run().value().equals(s.run()), o.at().toEpochMilli(), 0, 0, starts);
                }
                usage.add(new UsageSegment(o.run().value(), o.kind(), o.workspace(), o.quota(), o.user(), o.job(), o.gpu(), o.cpuMillis(),
                        o.at().toEpochMilli(), null, 0, 0));
            } else if (change instanceof UsageChange.Lent lent) {
                Predicate<UsageSegment> ofQuota = s -> s.kind() == UsageKind.LENT && s.workspace().equals(lent.quota().workspace())
                        && lent.quota().name().equals(s.quota());
                closeOpen(usage, ofQuota, lent.at().toEpochMilli(), 0, 0, false);
                if (lent.gpu() > 0 || lent.cpuMillis() > 0) {
                    usage.add(new UsageSegment(null, UsageKind.LENT, lent.quota().workspace(), lent.quota().name(), null, null, lent.gpu(),
                            lent.cpuMillis(), lent.at().toEpochMilli(), null, 0, 0));
                }
            } else if (change instanceof UsageChange.Measured measured) {
                usage.add(UsageSegment.measured(measured)); // closed already: open segments are untouched
            } else {
                throw new IllegalArgumentException("a usage change of a kind this store does not know: " + change);
            }
        }
    }

    /** What each quota lends now: its open lent segment. */
    static Map<QuotaId, Resources> lending(List<UsageSegment> usage) {
        Map<QuotaId, Resources> lending = new TreeMap<>();
        for (UsageSegment segment : usage) {
            if (segment.kind() == UsageKind.LENT && segment.endMs() == null) {
                lending.put(new QuotaId(segment.workspace(), segment.quota()), new Resources(segment.cpuMillis(), 0, (int) segment.gpu(), null));
            }
        }
        return lending;
    }

    private static void closeOpen(List<UsageSegment> usage, Predicate<UsageSegment> which, long atMs, long lostGpu, long lostCpu, boolean runStarts) {
        for (int i = 0; i < usage.size(); i++) {
            UsageSegment segment = usage.get(i);
            if (segment.endMs() == null && which.test(segment)) {
                usage.set(i, segment.closedAt(atMs, lostGpu, lostCpu, runStarts));
                lostGpu = 0; // charged once: to the first of an elastic run's two
                lostCpu = 0;
            }
        }
    }
}
