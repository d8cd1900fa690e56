package io.slipstream.store.jdbc;

import io.slipstream.api.run.QuotaId;
import io.slipstream.api.spec.Resources;
import io.slipstream.store.UsagePoint;
import io.slipstream.store.UsageQuery;
import io.slipstream.store.UsageReads;
import io.slipstream.store.UsageStep;
import io.slipstream.store.UsageTotal;
import java.util.List;
import java.util.Map;

/** {@link UsageReads} over {@link UsageRows}. */
final class JdbcUsage implements UsageReads {
    private final Handles handles;

    JdbcUsage(Handles handles) {
        this.handles = handles;
    }

    @Override
    public List<UsageTotal> totals(UsageQuery query) {
        return handles.with(h -> UsageRows.totals(h, query));
    }

    @Override
    public List<UsagePoint> series(UsageQuery query, UsageStep step) {
        return handles.with(h -> UsageRows.series(h, query, step));
    }

    @Override
    public Map<QuotaId, Resources> lending() {
        return handles.with(UsageRows::lending);
    }
}
