package io.slipstream.store;

import io.slipstream.api.run.QuotaId;
import io.slipstream.api.spec.Resources;
import java.util.List;
import java.util.Map;

/** Usage accounting: segments written with the changes they account for ({@link StoreTx#recordUsage}), read as totals. */
public interface UsageReads {

    /** The totals of the query's window, one per group and kind that has any, by key. */
    List<UsageTotal> totals(UsageQuery query);

    /** What each quota lends now (its open lent segment), by quota. */
    Map<QuotaId, Resources> lending();
}
