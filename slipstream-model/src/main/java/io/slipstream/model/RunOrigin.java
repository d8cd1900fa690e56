package io.slipstream.model;

import java.time.Instant;
import java.util.Map;
import java.util.TreeMap;

/**
 * How a run came to be: the overrides it was started with ({@code path=value}, as given), the due time of the schedule
 * that started it ({@code null}: started by hand), and the idempotency key of the request that created it.
 */
public record RunOrigin(Map<String, String> overrides, Instant scheduleTime, String idempotencyKey) {
    public static final RunOrigin MANUAL = new RunOrigin(Map.of(), null, null);

    public RunOrigin {
        overrides = overrides == null ? Map.of() : java.util.Collections.unmodifiableMap(new TreeMap<>(overrides));
    }
}
