package io.slipstream.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.slipstream.cli.SlipstreamProcess.Result;
import io.slipstream.cli.SlipstreamProcess.Server;
import io.slipstream.testing.NoProcessLeftBehind;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;

/**
 * The elastic story with the real server, CLI and processes (examples/pytorch-elastic, DDP over gloo, one rank a node):
 * team B's elastic run (1 to 4 instances) grows onto the 4 idle nodes; team A's guaranteed run reclaims 2 of them: B
 * shrinks to 2 without going back to the queue (RUNNING, attempt 1, no preemption), its survivors saving after the
 * same step and starting again in a world of 2; A finishes: B grows back to 4; B ends with the digest of an
 * uninterrupted run at 4 and of one at 2. Prints the times of its changes of size, from the server's timestamps (figures,
 * not asserted). Skipped, saying so, without PyTorch for Debian's /usr/bin/python3 (.ci/run installs it).
 */
@ExtendWith(NoProcessLeftBehind.class)
class ElasticStoryIT {
    private static final Path REPO = Path.of(System.getProperty("slipstream.repo", ".."));
    private static final String ENV = "env: {STEPS: \"600\", CHECKPOINT_EVERY: \"100\", SEED: \"42\", BATCH: \"64\", SHARDS: \"8\"}";

    @TempDir
    static Path work;

    private static Server server;

    @BeforeAll
    static void startServer() throws Exception {
        assumeTrue(SlipstreamProcess.torchIsInstalled(), "PyTorch is not installed for /usr/bin/python3 (apt-get install python3-torch): "
                + "the elastic story is not tested");
        server = SlipstreamProcess.startServer(work.resolve("data"));
        String job = Files.readString(REPO.resolve("examples/pytorch-elastic/job.yaml"));
        assertThat(job).contains(ENV);
        // A short training, the same for every run; the story's steps take 150 ms at least (results unchanged), so that
        // the reclaim and the grow land mid-run however loaded the machine is.
        Files.writeString(work.resolve("reference.yaml"), job.replace(ENV, ENV.replace("\"600\"", "\"240\"")));
        String jobAlone = job.substring(job.indexOf("---") + 4); // team B's workspace is teams.yaml's
        Files.writeString(work.resolve("elastic.yaml"), jobAlone.replace(ENV, ENV.replace("\"600\"", "\"240\"").replace("}", ", STEP_MILLIS: \"150\"}"))
                .replace("workspace: demo", "workspace: team-b").replace("  idleResources: OnlyIdle", "  quota: gpus\n  idleResources: OnlyIdle"));
        Files.copy(REPO.resolve("examples/quotas/teams.yaml"), work.resolve("teams.yaml"));
        Files.writeString(work.resolve("owner.yaml"), Files.readString(REPO.resolve("examples/quotas/owner.yaml"))
                .replace("replicas: 4", "replicas: 2").replace("SECONDS_TO_RUN: \"10\"", "SECONDS_TO_RUN: \"4\""));
    }

    @AfterAll
    static void stopServer() throws Exception {
        if (server != null) {
            server.close();
        }
    }

    @Test
    void anElasticBorrowerShrinksForTheOwnerGrowsBackAndEndsWithTheWeightsOfAnUninterruptedRun() throws Exception {
        // Uninterrupted (rigid: their minimum is all of them), side by side on the idle cluster: at 4 and at 2, half a node each.
        String[] half = {"--set", "nodeGroups.trainer.resources.gpu=4", "--set", "nodeGroups.trainer.resources.cpu=16",
                "--set", "nodeGroups.trainer.resources.memory=128Gi"};
        String atFour = submit("reference.yaml", null, concat(half, "--set", "nodeGroups.trainer.minReplicas=4"));
        String atTwo = submit("reference.yaml", null, concat(half, "--set", "nodeGroups.trainer.replicas=2", "--set",
                "nodeGroups.trainer.minReplicas=2"));
        String reference = digest(await(atFour, state("SUCCEEDED")), 4);
        assertThat(digest(await(atTwo, state("SUCCEEDED")), 2)).as("the weights do not depend on the world size").isEqualTo(reference);

        Result apply = cli("apply", "-f", "teams.yaml");
        assertThat(apply.exit()).as(apply.err()).isZero();
        String alice = cli("token", "create", "--user", "alice").lastLine();
        String bob = cli("token", "create", "--user", "bob").lastLine();
        String b = submit("elastic.yaml", bob);
        JsonNode grown = await(b, run -> world(run, 4) && run.path("progress").path("step").asLong() >= 20);
        assertThat(grown.get("world").get("notInQuota").asInt()).as("all on idle capacity").isEqualTo(4);

        String a = submit("owner.yaml", alice);
        JsonNode shrunk = await(b, run -> world(run, 2) && run.get("world").get("version").asInt() == 2);
        assertThat(shrunk.get("state").asString()).isEqualTo("RUNNING");
        assertThat(shrunk.get("attempt").asInt()).as("never queued again").isEqualTo(1);
        assertThat(shrunk.get("restarts").get("preemptions").asInt()).isZero();
        assertThat(shrunk.get("restarts").get("failures").asInt()).isZero();
        await(a, state("SUCCEEDED"));

        // Grown as the owner's instances end: one grow, or two in a row that one change of world carries (version 3 or 4).
        JsonNode regrown = await(b, run -> world(run, 4) && run.get("world").get("version").asInt() >= 3);
        assertThat(regrown.get("attempt").asInt()).isEqualTo(1);
        JsonNode done = await(b, state("SUCCEEDED"));
        assertThat(done.get("attempt").asInt()).isEqualTo(1);
        assertThat(done.get("restarts").get("preemptions").asInt()).isZero();
        assertThat(done.get("restarts").get("failures").asInt()).isZero();
        String logs = logs(b);
        assertThat(logs).containsPattern("world [34]: 4 ranks");
        assertThat(SlipstreamProcess.agreedDigest(logs, 4)).as("4 -> 2 -> 4 ends as an uninterrupted run").isEqualTo(reference);

        Result events = cli("events", b);
        assertThat(events.out()).contains("Shrunk").contains("Grown").contains("WorldStarted");
        printTimes(a, b);
    }

    /** The times of the changes of size, from the server's events: printed as figures, never asserted. */
    private static void printTimes(String owner, String borrower) throws Exception {
        List<JsonNode> ownerEvents = events(owner);
        List<JsonNode> events = events(borrower);
        Instant shrink = timeOf(events, e -> "Shrunk".equals(e.path("reason").asString()));
        Instant ownerRunning = timeOf(ownerEvents, e -> "RUNNING".equals(e.path("state").asString()) && "StateChanged".equals(e.path("type").asString()));
        Instant removedGone = lastBefore(events, e -> "InstanceExited".equals(e.path("type").asString())
                && (e.path("instance").asString().equals("trainer-2") || e.path("instance").asString().equals("trainer-3")), ownerRunning);
        Instant worldTwo = timeOf(events, e -> "WorldStarted".equals(e.path("reason").asString()));
        Instant survivorsRunning = firstAfter(events, e -> "InstanceStarted".equals(e.path("type").asString()), worldTwo);
        Instant ownerDone = timeOf(ownerEvents, e -> "SUCCEEDED".equals(e.path("state").asString()));
        Instant grow = timeOf(events, e -> "Grown".equals(e.path("reason").asString()));
        System.out.printf("elastic story: reclaim -> owner RUNNING %d ms (removed instances gone after %d ms); "
                        + "world change started -> survivors running %d ms; survivors' old world gone -> new world %d ms; owner done -> grow %d ms%n",
                Duration.between(shrink, ownerRunning).toMillis(), Duration.between(shrink, removedGone).toMillis(),
                Duration.between(shrink, survivorsRunning).toMillis(), Duration.between(worldTwo, survivorsRunning).toMillis(),
                Duration.between(ownerDone, grow).toMillis());
    }

    private static List<JsonNode> events(String id) throws Exception {
        List<JsonNode> all = new ArrayList<>();
        server.api("GET", "/api/v1/runs/" + id + "/events?limit=1000", null).get("items").forEach(all::add);
        return all;
    }

    private static Instant timeOf(List<JsonNode> events, Predicate<JsonNode> which) {
        return events.stream().filter(which).map(e -> Instant.parse(e.get("time").asString())).findFirst().orElseThrow(() ->
                new AssertionError("no such event in " + events));
    }

    private static Instant lastBefore(List<JsonNode> events, Predicate<JsonNode> which, Instant limit) {
        return events.stream().filter(which).map(e -> Instant.parse(e.get("time").asString())).filter(t -> !t.isAfter(limit))
                .max(Instant::compareTo).orElse(limit);
    }

    private static Instant firstAfter(List<JsonNode> events, Predicate<JsonNode> which, Instant from) {
        return events.stream().filter(which).map(e -> Instant.parse(e.get("time").asString())).filter(t -> !t.isBefore(from))
                .min(Instant::compareTo).orElseThrow();
    }

    private static boolean world(JsonNode run, int size) {
        return "RUNNING".equals(run.get("state").asString()) && run.hasNonNull("world") && run.get("world").get("size").asInt() == size
                && !run.get("world").get("changing").asBoolean();
    }

    private static Result cli(String... args) throws Exception {
        List<String> all = new ArrayList<>(List.of(args));
        all.addAll(List.of("--server", server.url(), "--data-dir", server.dataDir().toString()));
        return SlipstreamProcess.cli(work, all.toArray(String[]::new));
    }

    private static String submit(String file, String token, String... options) throws Exception {
        List<String> args = new ArrayList<>(List.of("submit", "-f", file));
        args.addAll(List.of(options));
        if (token != null) {
            args.addAll(List.of("--token", token));
        }
        Result submitted = cli(args.toArray(String[]::new));
        assertThat(submitted.exit()).as(submitted.err()).isZero();
        return submitted.lastLine();
    }

    private static String[] concat(String[] first, String... more) {
        List<String> all = new ArrayList<>(List.of(first));
        all.addAll(List.of(more));
        return all.toArray(String[]::new);
    }

    private static String digest(JsonNode run, int ranks) throws Exception {
        return SlipstreamProcess.agreedDigest(logs(run.get("id").asString()), ranks);
    }

    private static String logs(String id) throws Exception {
        Result logs = cli("logs", id);
        assertThat(logs.exit()).as(logs.err()).isZero();
        return logs.out();
    }

    /** Waits for the run; if it never gets there, the failure says what its instances printed. */
    private static JsonNode await(String id, Predicate<JsonNode> done) throws Exception {
        try {
            return server.awaitRun(id, Duration.ofSeconds(240), done);
        } catch (AssertionError e) {
            Result logs = cli("logs", id);
            String tail = logs.out().length() > 6000 ? logs.out().substring(logs.out().length() - 6000) : logs.out();
            throw new AssertionError(e.getMessage() + "\nits logs (tail):\n" + tail + logs.err() + "\nits events:\n" + cli("events", id).out(), e);
        }
    }

    private static Predicate<JsonNode> state(String state) {
        return run -> run.get("state").asString().equals(state);
    }
}
