package io.slipstream.store.memory;

import io.slipstream.api.run.QuotaId;
import io.slipstream.api.spec.Resources;
import io.slipstream.store.UsagePoint;
import io.slipstream.store.UsageQuery;
import io.slipstream.store.UsageReads;
import io.slipstream.store.UsageStep;
import io.slipstream.store.UsageSums;
import io.slipstream.store.UsageTotal;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/** {@link UsageReads} over the segments ({@link UsageSegments}), summed as the JDBC store's roll-ups are ({@link UsageSums}). */
final class InMemoryUsage implements UsageReads {
    private final Supplier<Tables> tables;

    InMemoryUsage(Supplier<Tables> tables) {
        this.tables = tables;
    }

    @Override
    public List<UsageTotal> totals(UsageQuery query) {
        return InMemoryReads.none(query.workspaces()) ? List.of() : UsageSums.of(tables.get().usage, query);
    }

    @Override
    public List<UsagePoint> series(UsageQuery query, UsageStep step) {
        return InMemoryReads.none(query.workspaces()) ? List.of() : UsageSums.series(tables.get().usage, query, step);
    }

    @Override
    public Map<QuotaId, Resources> lending() {
        return UsageSegments.lending(tables.get().usage);
    }
}
