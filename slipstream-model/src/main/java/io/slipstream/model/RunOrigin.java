package io.slipstream.model;

import io.slipstream.api.label.Labels;
import java.time.Instant;
import java.util.Map;
import java.util.TreeMap;

/**
 * How a run came to be: the overrides it was started with ({@code path=value}, as given), the due time of the schedule
 * that started it ({@code null}: started by hand), the idempotency key of the request that created it, the user
 * whose token submitted it ({@code null}: a schedule, or a run stored before submitters were recorded), for accounting,
 * and its labels: its job's at submit with those given at submit on top (selectors pick runs by them).
 */
public record RunOrigin(Map<String, String> overrides, Instant scheduleTime, String idempotencyKey, String submittedBy, Map<String, String> labels) {
    public static final RunOrigin MANUAL = new RunOrigin(Map.of(), null, null, null, Map.of());

    public RunOrigin {
        overrides = overrides == null ? Map.of() : java.util.Collections.unmodifiableMap(new TreeMap<>(overrides));
        labels = Labels.sorted(labels);
    }

    public RunOrigin(Map<String, String> overrides, Instant scheduleTime, String idempotencyKey, String submittedBy) {
        this(overrides, scheduleTime, idempotencyKey, submittedBy, Map.of());
    }

    public RunOrigin(Map<String, String> overrides, Instant scheduleTime, String idempotencyKey) {
        this(overrides, scheduleTime, idempotencyKey, null);
    }

    public RunOrigin withLabels(Map<String, String> newLabels) {
        return new RunOrigin(overrides, scheduleTime, idempotencyKey, submittedBy, newLabels);
    }

    public RunOrigin withoutIdempotencyKey() {
        return new RunOrigin(overrides, scheduleTime, null, submittedBy, labels);
    }
}
