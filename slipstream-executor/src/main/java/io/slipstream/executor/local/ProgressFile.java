package io.slipstream.executor.local;

import io.slipstream.api.codec.Json;
import io.slipstream.executor.Activity;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
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

    /** The progress in {@code file}, or {@code null} if there is none or it cannot be understood. */
    static Activity.Progress read(Path file) {
        try {
            if (!Files.isRegularFile(file, LinkOption.NOFOLLOW_LINKS) || Files.size(file) > MAX_BYTES) {
                return null;
            }
            Instant modified = Files.getLastModifiedTime(file, LinkOption.NOFOLLOW_LINKS).toInstant();
            byte[] data;
            try (InputStream in = Files.newInputStream(file, StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS)) {
                data = in.readNBytes(MAX_BYTES + 1);
            }
            return data.length > MAX_BYTES ? null : parse(data, modified);
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
