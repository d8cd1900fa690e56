package io.slipstream.model;

import java.time.Instant;
import java.util.Map;
import java.util.TreeMap;

/**
 * How a run came to be: the overrides it was started with ({@code path=value}, as given), the due time of the schedule
 * that started it ({@code null}: started by hand), the idempotency key of the request that created it, and the user
 * whose token submitted it ({@code null}: a schedule, or a run stored before submitters were recorded), for accounting.
 */
public record RunOrigin(Map<String, String> overrides, Instant scheduleTime, String idempotencyKey, String submittedBy) {
    public static final RunOrigin MANUAL = new RunOrigin(Map.of(), null, null, null);

    public RunOrigin {
        overrides = overrides == null ? Map.of() : java.util.Collections.unmodifiableMap(new TreeMap<>(overrides));
    }

    public RunOrigin(Map<String, String> overrides, Instant scheduleTime, String idempotencyKey) {
        this(overrides, scheduleTime, idempotencyKey, null);
    }
}
