package io.slipstream.executor.local.files;

import io.slipstream.api.codec.Json;
import io.slipstream.executor.Activity;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.LinkedHashMap;
import java.util.Map;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;

/**
 * Reads the progress an instance reports in {@code SLIPSTREAM_PROGRESS_FILE}:
 * {@code {"step": 1200, "checkpointStep": 1000, "checkpointTime": "2026-...Z", "time": "2026-...Z", "metrics": {"loss": 0.3}}}.
 * Only {@code step} is required; times default to the file's modification time. The file belongs to the workload, so
 * it is read with suspicion: no links followed, nothing but a small regular file, anything malformed ignored.
 */
final class ProgressFile {
    static final int MAX_BYTES = 64 * 1024;
    private static final int MAX_METRICS = 32;

    private ProgressFile() {
    }

    /**
     * The progress the instance reported, or {@code null} if there is none or it cannot be understood. The file is the
     * workload's: it is read only as a small regular file of {@code owner} (when not {@code null}), pinned first into
     * {@code pinDir} so that it cannot be swapped for a link or a FIFO while it is read (see {@link SafeFiles}).
     *
     * @throws PinnedFile.Stalled if the workload holds a lease on it (see {@link InstanceDirectory#progress})
     */
    static Activity.Progress read(Path file, Path pinDir, Integer owner) throws PinnedFile.Stalled {
        try {
            SafeFiles.Content content = SafeFiles.readWorkloadFile(file, pinDir, MAX_BYTES, owner);
            return content == null ? null : parse(content.data(), content.modified());
        } catch (PinnedFile.Stalled e) {
            throw e;
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    static Activity.Progress parse(byte[] data, Instant modified) {
        JsonNode node;
        try {
            node = Json.mapper().readTree(data);
        } catch (JacksonException e) {
            return null;
        }
        if (node == null || !node.isObject() || !node.path("step").canConvertToLong() || !node.path("step").isIntegralNumber()) {
            return null;
        }
        long step = node.path("step").asLong();
        Long checkpointStep = node.path("checkpointStep").isIntegralNumber() ? node.path("checkpointStep").asLong() : null;
        Instant at = instant(node.path("time"), modified);
        Instant checkpointAt = checkpointStep == null ? null : instant(node.path("checkpointTime"), at);
        Map<String, Double> metrics = new LinkedHashMap<>();
        for (var entry : node.path("metrics").properties()) {
            if (metrics.size() < MAX_METRICS && entry.getKey().length() <= 64 && entry.getValue().isNumber()) {
                metrics.put(entry.getKey(), entry.getValue().asDouble());
            }
        }
        return new Activity.Progress(step, at, checkpointStep, checkpointAt, metrics);
    }

    private static Instant instant(JsonNode value, Instant otherwise) {
        if (!value.isString()) {
            return otherwise;
        }
        try {
            return Instant.parse(value.asString());
        } catch (DateTimeParseException e) {
            return otherwise;
        }
    }
}
