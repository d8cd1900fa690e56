package io.slipstream.executor.slurm;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What slurmctld's log (its default level, info) says of each job, to the millisecond: when sbatch's submission reached
 * it, when its scheduler gave the job its node, when the first scancel reached it, and when the job's end did. The
 * Slurm side of a run's {@link OneRunAtATime.Timeline}.
 */
final class SlurmctldLog {
    private static final Pattern LINE = Pattern.compile("^\\[(\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3})\\] (.*)$");
    private static final Pattern SUBMITTED = Pattern.compile("_slurm_rpc_submit_batch_job: JobId=(\\d+) ");
    private static final Pattern ALLOCATED = Pattern.compile("(?:sched: Allocate|backfill: Started) JobId=(\\d+) ");
    private static final Pattern SIGNALLED = Pattern.compile("_slurm_rpc_kill_job: REQUEST_KILL_JOB JobId=(\\d+) ");
    private static final Pattern COMPLETED = Pattern.compile("_job_complete: JobId=(\\d+) done");

    private final Map<String, Instant> submitted = new HashMap<>();
    private final Map<String, Instant> allocated = new HashMap<>();
    private final Map<String, Instant> signalled = new HashMap<>();
    private final Map<String, Instant> completed = new HashMap<>();

    /**
     * Reads the log; its times are the machine's local time, without a zone, so {@code offset} is the one slurmctld ran
     * in (this JVM's zone may be another: surefire's tests run in Pacific/Chatham).
     */
    SlurmctldLog(Path log, ZoneOffset offset) throws IOException {
        for (String line : Files.readAllLines(log, StandardCharsets.UTF_8)) {
            Matcher m = LINE.matcher(line);
            if (!m.matches()) {
                continue;
            }
            Instant at = LocalDateTime.parse(m.group(1)).toInstant(offset);
            first(SUBMITTED, m.group(2), at, submitted);
            first(ALLOCATED, m.group(2), at, allocated);
            first(SIGNALLED, m.group(2), at, signalled);
            first(COMPLETED, m.group(2), at, completed);
        }
    }

    /** The offset of this machine's local time now, as {@code date} (and so slurmctld) has it. */
    static ZoneOffset machineOffset() throws IOException, InterruptedException {
        Process date = new ProcessBuilder("date", "+%z").redirectErrorStream(true).start();
        String text = new String(date.getInputStream().readAllBytes(), StandardCharsets.US_ASCII).trim();
        date.waitFor();
        return ZoneOffset.of(text.substring(0, 3) + ":" + text.substring(3));
    }

    private static void first(Pattern pattern, String message, Instant at, Map<String, Instant> into) {
        Matcher m = pattern.matcher(message);
        if (m.find()) {
            into.putIfAbsent(m.group(1), at);
        }
    }

    /** The timelines with what this log says of their jobs (a run without a job id is left as it is). */
    List<OneRunAtATime.Timeline> add(List<OneRunAtATime.Timeline> timelines) {
        return timelines.stream().map(t -> t.job() == null ? t
                : t.withSlurm(submitted.get(t.job()), allocated.get(t.job()), signalled.get(t.job()), completed.get(t.job()))).toList();
    }
}
