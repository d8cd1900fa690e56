package io.slipstream.store;

import static java.util.Objects.requireNonNull;

/** One bucket of a usage series: the total of one group and kind in {@code [bucketMs, bucketMs + step)}. */
public record UsagePoint(long bucketMs, UsageTotal total) {
    public UsagePoint {
        requireNonNull(total, "total is null");
    }
}
