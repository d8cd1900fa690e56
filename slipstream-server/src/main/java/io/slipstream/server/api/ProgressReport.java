package io.slipstream.server.api;

import io.slipstream.api.codec.DocumentParser;
import io.slipstream.api.problem.Problems;
import io.slipstream.api.spec.FieldReader;
import io.slipstream.executor.Activity;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;

/** A progress report, as the SDK sends it (the same fields as the progress file); every field checked. */
final class ProgressReport {
    private ProgressReport() {
    }

    static Activity.Progress read(byte[] body, Instant now) {
        Problems problems = new Problems();
        FieldReader report = FieldReader.of(DocumentParser.parseOne(body), "", problems);
        Long step = report.integer("step", true, 0, Long.MAX_VALUE);
        Long checkpointStep = report.integer("checkpointStep", false, 0, Long.MAX_VALUE);
        String checkpointTime = report.string("checkpointTime", false, 64);
        report.string("time", false, 64); // when it was written; the server's clock is what counts
        Instant checkpointAt = null;
        if (checkpointTime != null) {
            try {
                checkpointAt = Instant.parse(checkpointTime);
            } catch (java.time.format.DateTimeParseException e) {
                problems.add("checkpointTime", "must be an instant such as 2026-11-30T10:00:00Z");
            }
        }
        if (checkpointStep != null && checkpointTime == null) {
            problems.add("checkpointTime", "is required with checkpointStep");
        }
        Map<String, Double> metrics = new LinkedHashMap<>();
        var entries = report.entries("metrics", false, 64);
        if (entries != null) {
            for (var entry : entries) {
                if (!entry.getValue().isNumber() || !Double.isFinite(entry.getValue().asDouble())) {
                    problems.add("metrics." + entry.getKey(), "must be a finite number");
                } else {
                    metrics.put(entry.getKey(), entry.getValue().asDouble());
                }
            }
        }
        report.finish();
        problems.throwIfAny("the progress report is invalid");
        return new Activity.Progress(step, now, checkpointStep, checkpointAt, metrics);
    }
}
