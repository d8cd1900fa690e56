package io.slipstream.store;

import io.slipstream.api.run.QuotaId;
import io.slipstream.api.spec.Resources;
import java.util.List;
import java.util.Map;

/** Usage accounting: segments written with the changes they account for ({@link StoreTx#recordUsage}), read as totals. */
public interface UsageReads {

    /** The totals of the query's window, one per group and kind that has any, by key. */
    List<UsageTotal> totals(UsageQuery query);

    /**
     * The totals of each step of the query's window (which must be whole steps), one per bucket, group and kind that
     * has any: what {@link #totals} says of that bucket alone, so a series adds up to the totals of its window.
     */
    List<UsagePoint> series(UsageQuery query, UsageStep step);

    /** What each quota lends now (its open lent segment), by quota. */
    Map<QuotaId, Resources> lending();
}
