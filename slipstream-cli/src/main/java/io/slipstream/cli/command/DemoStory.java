package io.slipstream.cli.command;

import io.slipstream.api.wire.RunView;
import io.slipstream.cli.ApiClient;
import io.slipstream.cli.CliException;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import tools.jackson.databind.JsonNode;

/**
 * The demo's story, told live against a real server: two teams share the cluster; team B trains on team A's idle
 * GPUs; team A takes them back; team B's run saves a checkpoint on the notice, waits, resumes, and ends with exactly
 * the weights of a run that was never interrupted.
 */
final class DemoStory {
    private static final int STEPS = 600;
    private static final int CHECKPOINT_EVERY = 200;
    private static final Pattern SHA = Pattern.compile("final weights sha256=([0-9a-f]{64})");
    private static final Duration PATIENCE = Duration.ofMinutes(5);

    private final ApiClient admin;
    private final PrintWriter out;
    private final Instant began = Instant.now();

    DemoStory(ApiClient admin, PrintWriter out) {
        this.admin = admin;
        this.out = out;
    }

    /** Tells the story; returns whether the interrupted run ended with the same weights as the uninterrupted one. */
    boolean tell() throws IOException, InterruptedException {
        say("2. two teams share the cluster: team A's quota guarantees it all 32 GPUs; team B is guaranteed none, but may "
                + "borrow what team A leaves idle (examples/quotas/teams.yaml)");
        admin.post("/api/v1/apply", resource("quotas/teams.yaml"), "application/yaml");
        ApiClient bob = new ApiClient(admin.server(), admin.postJson("/api/v1/tokens", Map.of("user", "bob", "description", "demo"))
                .get("token").asString());

        say("3. team B (bob) starts a data-parallel training run: 4 ranks in a ring all-reduce, one per node, on idle GPUs");
        String training = train(bob);
        RunView running = await(bob, training, run -> run.state().name().equals("RUNNING"), null);
        say("   run " + training + " is RUNNING " + running.realTimeResources() + " (on borrowed capacity: it may be reclaimed)");
        await(bob, training, run -> step(run) >= CHECKPOINT_EVERY + CHECKPOINT_EVERY / 2, "   ");

        say("4. team A needs its GPUs: it submits a job on its guarantee (examples/quotas/owner.yaml)");
        String owner = start(admin, "quotas/owner.yaml", List.of("nodeGroups.worker.env.SECONDS_TO_RUN=5"));
        RunView preempted = await(bob, training, run -> run.attempt() == 2, null);
        String firstAttempt = logs(bob, training, 1);
        Matcher saved = Pattern.compile("saved the checkpoint of step (\\d+) on the stop notice in ([0-9.]+) ms").matcher(firstAttempt);
        Matcher alreadySaved = Pattern.compile("rank 0 stops after step (\\d+), whose checkpoint is already saved").matcher(firstAttempt);
        say("   team B's run got the notice (SIGTERM + " + "$SLIPSTREAM_PREEMPTION_NOTICE_FILE) and "
                + (saved.find() ? "saved a checkpoint of step " + saved.group(1) + " in " + saved.group(2) + " ms"
                : alreadySaved.find() ? "stopped after step " + alreadySaved.group(1) + ", whose checkpoint it had just saved" : "stopped"));
        say(String.format(Locale.ROOT, "   it is %s again (%s); work lost: %.1f instance-seconds", preempted.state(), preempted.reason(),
                preempted.progress().workLostSeconds()));
        RunView ownerRunning = await(admin, owner, run -> run.state().isFinal() || run.state().name().equals("RUNNING"), null);
        say("   team A's run " + owner + " is " + ownerRunning.state() + " " + ownerRunning.realTimeResources());
        await(admin, owner, run -> run.state().isFinal(), null);

        say("5. team A is done: the GPUs are idle again, and team B's run resumes from its checkpoint (attempt 2)");
        await(bob, training, run -> run.state().name().equals("RUNNING") && run.attempt() == 2, null);
        RunView done = await(bob, training, run -> run.state().isFinal(), "   ");
        String resumed = logs(bob, training, 2);
        Matcher from = Pattern.compile("rank 0 resumes from the checkpoint of step (\\d+)").matcher(resumed);
        if (from.find()) {
            say("   rank 0 resumed from the checkpoint of step " + from.group(1));
        }
        String interrupted = digest(resumed);
        say("   run " + training + " " + done.state() + " after " + done.attempt() + " attempts" + Runs.restarts(done.restarts())
                + ": final weights sha256=" + interrupted);

        say("6. was anything lost? the same training once more, never interrupted:");
        String reference = train(bob);
        RunView referenceDone = await(bob, reference, run -> run.state().isFinal(), "   ");
        String expected = digest(logs(bob, reference, 1));
        say("   run " + reference + " " + referenceDone.state() + ": final weights sha256=" + expected);
        boolean identical = expected != null && expected.equals(interrupted);
        say(identical ? "   identical, bit for bit: the preemption cost team B nothing but the wait"
                : "   the weights differ: that is a bug, please report it");
        out.printf(Locale.ROOT, "The story took %d s.%n", Duration.between(began, Instant.now()).toSeconds());
        out.flush();
        return identical && Runs.succeeded(done) && Runs.succeeded(referenceDone);
    }

    private String train(ApiClient bob) throws IOException {
        return start(bob, "fault-tolerance/training-on-idle.yaml", List.of(
                "nodeGroups.coordinator.env.STEPS=" + STEPS, "nodeGroups.worker.env.STEPS=" + STEPS,
                "nodeGroups.coordinator.env.CHECKPOINT_EVERY=" + CHECKPOINT_EVERY, "nodeGroups.worker.env.CHECKPOINT_EVERY=" + CHECKPOINT_EVERY,
                "nodeGroups.coordinator.env.BENCHMARK_MB=0", "nodeGroups.worker.env.BENCHMARK_MB=0"));
    }

    private static String start(ApiClient api, String example, List<String> sets) throws IOException {
        RunOptions options = new RunOptions();
        options.sets.addAll(sets);
        return SubmitCommand.submit(api, resource(example), example, options, new PrintWriter(PrintWriter.nullWriter()));
    }

    private static byte[] resource(String name) throws IOException {
        try (InputStream in = DemoStory.class.getResourceAsStream("/examples/" + name)) {
            if (in == null) {
                throw new CliException(CliException.RUN_FAILED, "the demo's example " + name + " is missing from the jar");
            }
            return in.readAllBytes();
        }
    }

    private static long step(RunView run) {
        return run.progress() == null || run.progress().step() == null ? 0 : run.progress().step();
    }

    /** Polls the run until {@code done}; with a prefix, prints its progress every 100 steps meanwhile. */
    private RunView await(ApiClient api, String id, Predicate<RunView> done, String progressPrefix) throws InterruptedException {
        long deadline = System.nanoTime() + PATIENCE.toNanos();
        long shown = -1;
        while (true) {
            RunView run = Runs.get(api, id);
            long hundreds = step(run) / 100;
            if (progressPrefix != null && hundreds > shown && step(run) > 0) {
                shown = hundreds;
                say(progressPrefix + "step " + step(run) + "/" + STEPS + (run.progress().checkpointStep() == null ? ""
                        : ", checkpoint of step " + run.progress().checkpointStep()) + " (attempt " + run.attempt() + ")");
            }
            if (done.test(run)) {
                return run;
            }
            if (run.state().isFinal() || System.nanoTime() > deadline) {
                throw new CliException(CliException.RUN_FAILED, "run " + id + " is " + run.state() + " (" + run.reason() + "); the demo cannot go on");
            }
            TimeUnit.MILLISECONDS.sleep(250);
        }
    }

    private static String logs(ApiClient api, String id, int attempt) throws IOException {
        try (InputStream in = api.stream("/api/v1/runs/" + Runs.encode(id) + "/logs", Map.of("attempt", Integer.toString(attempt)))) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    private static String digest(String logs) {
        Matcher sha = SHA.matcher(logs);
        return sha.find() ? sha.group(1) : null;
    }

    private void say(String line) {
        out.printf(Locale.ROOT, "[%3ds] %s%n", Duration.between(began, Instant.now()).toSeconds(), line);
        out.flush();
    }
}
