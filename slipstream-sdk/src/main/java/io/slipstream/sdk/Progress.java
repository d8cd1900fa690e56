package io.slipstream.sdk;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Reports progress to the platform through {@code SLIPSTREAM_PROGRESS_FILE}, or where there is none, to the API with
 * the run's token ({@code SLIPSTREAM_SERVER}, {@code SLIPSTREAM_RUN_TOKEN}): the step reached, the newest checkpoint
 * and a few metrics. The platform reads it for hang detection (progress counts as a sign of life) and to tell how much
 * work a preemption or failure throws away. Writes are atomic and at most one a second, except checkpoints, which are
 * always written at once. Outside Slipstream (no such variable) reports go nowhere.
 */
public final class Progress {
    private static final Duration MIN_INTERVAL = Duration.ofSeconds(1);

    private final Path file;
    private final ProgressApi api;
    private final Clock clock;
    private long step = -1;
    private Long checkpointStep;
    private Instant checkpointTime;
    private Instant lastWrite = Instant.MIN;

    Progress(Path file, Clock clock) {
        this(file, null, clock);
    }

    /** @param api where reports go when there is no {@code file}, or {@code null} */
    Progress(Path file, ProgressApi api, Clock clock) {
        this.file = file;
        this.api = api;
        this.clock = clock;
    }

    /** The step reached, with metrics (name to value, e.g. {@code loss}); may be skipped if the last write was under a second ago. */
    public synchronized void report(long newStep, Map<String, Double> metrics) {
        step = newStep;
        Instant now = clock.instant();
        if (Duration.between(lastWrite, now).compareTo(MIN_INTERVAL) >= 0) {
            write(now, metrics);
        }
    }

    /** A checkpoint of {@code savedStep} is complete: written at once, as the platform counts lost work from it. */
    public synchronized void checkpointed(long savedStep) {
        Instant now = clock.instant();
        checkpointStep = savedStep;
        checkpointTime = now;
        step = Math.max(step, savedStep);
        write(now, Map.of());
    }

    private void write(Instant now, Map<String, Double> metrics) {
        lastWrite = now;
        if (file == null && api == null) {
            return;
        }
        Map<String, Object> node = new LinkedHashMap<>();
        node.put("step", Math.max(step, 0));
        node.put("time", now.toString());
        if (checkpointStep != null) {
            node.put("checkpointStep", checkpointStep);
            node.put("checkpointTime", checkpointTime.toString());
        }
        Map<String, Object> values = new LinkedHashMap<>();
        new LinkedHashMap<>(metrics).forEach((name, value) -> {
            if (value != null && Double.isFinite(value)) {
                values.put(name, value);
            }
        });
        node.put("metrics", values);
        String json = MiniJson.write(node);
        if (file == null) {
            api.send(json);
            return;
        }
        try {
            AtomicFiles.writeAtomically(file, (json + "\n").getBytes(StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write the progress file " + file, e);
        }
    }
}
