package io.slipstream.executor;

import io.slipstream.api.spec.Durations;
import io.slipstream.api.spec.FieldReader;
import io.slipstream.api.spec.Quantities;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.time.Duration;
import tools.jackson.databind.JsonNode;

/**
 * Values of config files that executors read besides what {@link FieldReader} reads: durations, sizes, absolute paths.
 * Each returns {@code null} when the field is absent or wrong; a wrong one is recorded with its path.
 */
public final class ConfigValues {
    private ConfigValues() {
    }

    /** A duration such as {@code 30s} or {@code 2m}. */
    public static Duration duration(FieldReader reader, String field) {
        String text = reader.string(field, false, 32);
        if (text == null) {
            return null;
        }
        try {
            return Durations.parse(text);
        } catch (IllegalArgumentException e) {
            reader.problems().add(reader.pathOf(field), e.getMessage());
            return null;
        }
    }

    /** A size in bytes such as {@code 1Gi} or {@code 500Mi}: 0 (no limit) or at least 1Mi. */
    public static Long size(FieldReader reader, String field) {
        JsonNode value = reader.get(field);
        if (value == null) {
            return null;
        }
        if (!value.isString() && !value.isIntegralNumber()) {
            reader.problems().add(reader.pathOf(field), "must be a size such as 1Gi or 500Mi (0: no limit), not " + FieldReader.describe(value));
            return null;
        }
        try {
            long bytes = Quantities.MEMORY.parse(value.asString());
            if (bytes != 0 && bytes < (1L << 20)) {
                reader.problems().add(reader.pathOf(field), "must be 0 (no limit) or at least 1Mi (is " + value.asString() + ")");
                return null;
            }
            return bytes;
        } catch (IllegalArgumentException e) {
            reader.problems().add(reader.pathOf(field), e.getMessage());
            return null;
        }
    }

    /** An absolute path, normalized. */
    public static Path absolutePath(FieldReader reader, String field) {
        String text = reader.string(field, false, 4096);
        if (text == null) {
            return null;
        }
        try {
            Path path = Path.of(text);
            if (path.isAbsolute()) {
                return path.normalize();
            }
        } catch (InvalidPathException e) {
            // reported below
        }
        reader.problems().add(reader.pathOf(field), "must be an absolute path (is '" + text + "')");
        return null;
    }
}
