package io.slipstream.executor.slurm;

import io.slipstream.api.codec.Json;
import io.slipstream.server.support.TestServer;
import java.io.IOException;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.Function;
import java.util.function.IntConsumer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import tools.jackson.databind.JsonNode;

/**
 * One-instance runs through a real server, one at a time: each submitted, waited for until its command runs, cancelled,
 * and waited for until the server recorded its end. What each moment of a run was, by the server's timestamps, the
 * command's own stamp and the times of the files its instance left ({@link Timeline}).
 */
final class OneRunAtATime {
    static final String WORKSPACE = "bench";
    static final String JOB = "stoppable";
    /**
     * Honours SIGTERM at once (its trap ends the sleep, reaps it and exits 0), so that a stop's figure is the executor's and
     * not the workload's. Reaped, because a process of a Slurm job still there when its script ends costs the job 1 or 3 s
     * more (proctrack/pgid's wait: SIGKILL, sleep 1 s, look again, sleep 2 s). It prints {@code $EPOCHREALTIME} once its
     * trap is set: the moment the command runs, without a fork.
     */
    static final String COMMAND = "trap 'kill $child 2>/dev/null; wait $child; exit 0' TERM; sleep 600 & child=$!; echo \"started $EPOCHREALTIME\"; wait";
    private static final Pattern STARTED = Pattern.compile("started (\\d+\\.\\d+)");
    private static final Duration PATIENCE = Duration.ofMinutes(2);
    /**
     * Random pauses, at most this long, before each submission and before each cancel. Without them, one run after another
     * keeps in step with what recurs on its own (slurmctld starts jobs at its pass about once a second; the executor reads
     * squeue every poll interval): in a first full run, submissions at a 200 ms poll met slurmctld's pass 630-730 ms later
     * at p50-p90 instead of anywhere in the second, and stops at a 2 s poll waited 1.35 s at p50, not 1 s.
     */
    private static final long PAUSE_BEFORE_SUBMIT_MILLIS = 1_000;
    private static final long PAUSE_BEFORE_CANCEL_MILLIS = 2_000;
    /** Seeded: a repeat pauses as the run before it did. */
    private final java.util.Random pauses = new java.util.Random(48);

    /**
     * The moments of one run. The server's: {@code created}, the run's creation; {@code runStarted}, the run's own
     * {@code startedAt}, the time of the scheduling cycle that launched it (taken before the launch); {@code launched},
     * its instance's {@code startedAt}, once the executor's launch returned (for Slurm, once sbatch did: the job may not
     * run yet); {@code cancelRequested}; {@code instanceEnded}, the time of the executor's report of the end;
     * {@code runEnded}, the run's {@code finishedAt}. The instance's: {@code wrapperStarted}, when the Slurm job's wrapper
     * wrote {@code slurm_job} (the job's id, {@code job}), {@code null} on the local executor; {@code commandStarted}, the
     * command's own stamp; {@code commandEnded}, when its {@code exit_code} was written. Slurm's ({@link SlurmctldLog},
     * {@code null} until {@link #withSlurm}): {@code submitted}, {@code allocated}, {@code signalled} (the first scancel)
     * and {@code completed}, as slurmctld logged them.
     */
    record Timeline(String run, String job, Instant created, Instant runStarted, Instant launched, Instant wrapperStarted, Instant commandStarted,
                    Instant cancelRequested, Instant commandEnded, Instant instanceEnded, Instant runEnded, int exitCode, Instant submitted,
                    Instant allocated, Instant signalled, Instant completed) {
        Timeline withSlurm(Instant submittedAt, Instant allocatedAt, Instant signalledAt, Instant completedAt) {
            return new Timeline(run, job, created, runStarted, launched, wrapperStarted, commandStarted, cancelRequested, commandEnded, instanceEnded,
                    runEnded, exitCode, submittedAt, allocatedAt, signalledAt, completedAt);
        }

        /** Milliseconds from {@code from} to {@code to}, or {@code null} where either is not known. */
        static Function<Timeline, Double> between(Function<Timeline, Instant> from, Function<Timeline, Instant> to) {
            return timeline -> {
                Instant start = from.apply(timeline);
                Instant end = to.apply(timeline);
                return start == null || end == null ? null : Duration.between(start, end).toNanos() / 1e6;
            };
        }
    }

    private final TestServer server;
    private final String admin;
    private final Path instancesRoot;

    /** @param instancesRoot where the executor keeps its instances' directories ({@code <run>/<attempt>/<rank>}) */
    OneRunAtATime(TestServer server, Path instancesRoot) {
        this.server = server;
        this.admin = server.adminToken();
        this.instancesRoot = instancesRoot;
    }

    /** Declares the workspace and the job the runs are of: one instance of {@link #COMMAND} on one CPU. */
    void declare() {
        String command = Json.mapper().writeValueAsString(COMMAND); // a JSON string is a YAML double-quoted scalar
        TestServer.Response applied = server.post("/api/v1/apply", admin, """
                apiVersion: slipstream/v1
                kind: Workspace
                metadata: {name: %s}
                ---
                apiVersion: slipstream/v1
                kind: Job
                metadata: {name: %s, workspace: %s}
                spec:
                  nodeGroups:
                    - name: main
                      resources: {cpu: 1, memory: 1Gi}
                      command: [bash, -c, %s]
                """.formatted(WORKSPACE, JOB, WORKSPACE, command));
        if (applied.status() / 100 != 2) {
            throw new AssertionError("apply failed: " + applied.status() + " " + applied.text());
        }
    }

    /** {@code count} runs one after the other; {@code progress} is told after each. */
    List<Timeline> measure(int count, IntConsumer progress) throws Exception {
        List<Timeline> runs = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            runs.add(one());
            progress.accept(i + 1);
        }
        return runs;
    }

    private Timeline one() throws Exception {
        Thread.sleep(pauses.nextLong(PAUSE_BEFORE_SUBMIT_MILLIS)); // out of step with slurmctld's passes
        TestServer.Response created = server.post("/api/v1/runs", admin, "{\"workspace\":\"" + WORKSPACE + "\",\"job\":\"" + JOB + "\"}");
        if (created.status() != 201) {
            throw new AssertionError("submit failed: " + created.status() + " " + created.text());
        }
        String id = created.json().get("id").asString();
        await(id, "to run", run -> switch (run.get("state").asString()) {
            case "RUNNING" -> true;
            case "QUEUED", "STARTING" -> false;
            default -> throw new AssertionError("run " + id + " ended before it ran: " + run);
        });
        BigDecimal commandStarted = commandStamp(id);
        Thread.sleep(pauses.nextLong(PAUSE_BEFORE_CANCEL_MILLIS)); // out of step with the executor's polls
        TestServer.Response cancelled = server.post("/api/v1/runs/" + id + "/cancel", admin, "");
        if (cancelled.status() / 100 != 2) {
            throw new AssertionError("cancel failed: " + cancelled.status() + " " + cancelled.text());
        }
        JsonNode run = await(id, "to end", r -> r.get("finishedAt") != null && !r.get("finishedAt").isNull());
        if (!run.get("state").asString().equals("CANCELLED")) {
            throw new AssertionError("run " + id + " ended " + run.get("state").asString() + ", not CANCELLED: " + run);
        }
        JsonNode instance = run.get("instances").get(0);
        Path dir = instancesRoot.resolve(id).resolve("1").resolve("0"); // attempt 1, rank 0
        Path job = dir.resolve(InstanceScript.SLURM_JOB);
        return new Timeline(id, Files.exists(job) ? Files.readString(job, StandardCharsets.US_ASCII).trim() : null, instant(run, "createdAt"),
                instant(run, "startedAt"), instant(instance, "startedAt"), modified(job),
                Instant.EPOCH.plusNanos(commandStarted.movePointRight(9).longValueExact()), instant(run, "cancelRequestedAt"),
                modified(dir.resolve("exit_code")), instant(instance, "finishedAt"), instant(run, "finishedAt"), instance.get("exitCode").asInt(),
                null, null, null, null);
    }

    /** Polls the run until {@code done} holds for it; often, as the time between its steps is what is measured. */
    private JsonNode await(String id, String what, Function<JsonNode, Boolean> done) throws InterruptedException {
        long deadline = System.nanoTime() + PATIENCE.toNanos();
        while (true) {
            JsonNode run = server.get("/api/v1/runs/" + id, admin).json();
            if (done.apply(run)) {
                return run;
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("run " + id + " did not get " + what + " within " + PATIENCE.toMinutes() + " minutes: " + run);
            }
            Thread.sleep(10); // polling with a deadline
        }
    }

    /** The command's stamp, once it printed it (through the server's log API, as a user reads it). */
    private BigDecimal commandStamp(String id) throws InterruptedException {
        long deadline = System.nanoTime() + PATIENCE.toNanos();
        while (true) {
            TestServer.Response logs = server.get("/api/v1/runs/" + id + "/logs?stream=stdout&prefix=false", admin);
            Matcher started = logs.status() == 200 ? STARTED.matcher(logs.text()) : null;
            if (started != null && started.find()) {
                return new BigDecimal(started.group(1));
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("run " + id + " printed no start within " + PATIENCE.toMinutes() + " minutes: " + logs.status() + " " + logs.text());
            }
            Thread.sleep(10); // polling with a deadline
        }
    }

    private static Instant instant(JsonNode view, String field) {
        return Instant.parse(Objects.requireNonNull(view.get(field), field).asString());
    }

    private static Instant modified(Path file) throws IOException {
        return Files.exists(file) ? Files.getLastModifiedTime(file).toInstant() : null;
    }
}
