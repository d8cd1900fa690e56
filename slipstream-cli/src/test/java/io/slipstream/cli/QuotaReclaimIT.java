package io.slipstream.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.slipstream.api.codec.Json;
import io.slipstream.cli.SlipstreamProcess.Result;
import io.slipstream.cli.SlipstreamProcess.Server;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import io.slipstream.testing.NoProcessLeftBehind;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;

/**
 * Team B borrows team A's idle GPUs; team A takes them back: B is preempted (notice, grace period), A runs
 * guaranteed, and B runs again once A is done. Through the real server and CLI, with the shipped examples.
 */
@ExtendWith(NoProcessLeftBehind.class)
class QuotaReclaimIT {
    private static final Path EXAMPLES = Path.of(System.getProperty("slipstream.repo", "..")).resolve("examples/quotas");

    @TempDir
    Path work;

    private Server server;

    private Result cli(String... args) throws Exception {
        List<String> all = new ArrayList<>(List.of(args));
        all.addAll(List.of("--server", server.url(), "--data-dir", server.dataDir().toString()));
        return SlipstreamProcess.cli(work, all.toArray(String[]::new));
    }

    private JsonNode run(String id, String... tokenArgs) throws Exception {
        List<String> args = new ArrayList<>(List.of("get", "run", id, "-o", "json"));
        args.addAll(List.of(tokenArgs));
        Result result = cli(args.toArray(String[]::new));
        assertThat(result.exit()).as(result.err()).isZero();
        return Json.mapper().readTree(result.out());
    }

    /** Polls over HTTP; then the CLI's view of the run, with the caller's token. */
    private JsonNode await(String id, Predicate<JsonNode> done, String... tokenArgs) throws Exception {
        server.awaitRun(id, Duration.ofSeconds(120), done);
        return run(id, tokenArgs);
    }

    /** A timestamp of the run; its absence fails with the whole run (once, in CI, the owner's startedAt was missing here). */
    private static Instant instant(JsonNode run, String field) {
        assertThat(run.hasNonNull(field)).as("%s in %s", field, run).isTrue();
        return Instant.parse(run.get(field).asString());
    }

    private static Predicate<JsonNode> state(String state) {
        return run -> run.get("state").asString().equals(state);
    }

    @Test
    void aBorrowerIsPreemptedForTheOwnerAndRunsAgainLater() throws Exception {
        server = SlipstreamProcess.startServer(work.resolve("data"));
        try {
            Files.copy(EXAMPLES.resolve("teams.yaml"), work.resolve("teams.yaml"));
            Files.writeString(work.resolve("borrower.yaml"), Files.readString(EXAMPLES.resolve("borrower.yaml")).replace("STEPS: \"60\"", "STEPS: \"600\""));
            Files.writeString(work.resolve("owner.yaml"), Files.readString(EXAMPLES.resolve("owner.yaml"))
                    .replace("SECONDS_TO_RUN: \"10\"", "SECONDS_TO_RUN: \"3\""));
            Result apply = cli("apply", "-f", "teams.yaml");
            assertThat(apply.exit()).as(apply.err()).isZero();
            String bob = cli("token", "create", "--user", "bob").lastLine();

            String borrower = cli("submit", "-f", "borrower.yaml", "--token", bob).lastLine();
            JsonNode borrowing = await(borrower, state("RUNNING"), "--token", bob);
            assertThat(borrowing.get("realTimeResources").asString()).isEqualTo("NotInQuota");
            assertThat(borrowing.get("instances")).allSatisfy(i -> assertThat(i.get("node").asString()).isEqualTo("hidden"));
            assertThat(run(borrower).get("instances").get(0).get("node").asString()).startsWith("node-"); // admins see nodes

            Result submitted = cli("submit", "-f", "owner.yaml");
            assertThat(submitted.exit()).as(submitted.err()).isZero();
            String owner = submitted.lastLine();
            JsonNode running = await(owner, state("RUNNING"));
            assertThat(running.get("realTimeResources").asString()).isEqualTo("InQuota");
            Duration reclaim = Duration.between(instant(running, "createdAt"), instant(running, "startedAt"));
            // How long the owner waited is a figure, not a test (the grace period's arithmetic is ControlLoopTest's, on a fake clock).
            System.out.printf("figure: the owner ran %d ms after it was submitted (borrower's grace period 10 s)%n", reclaim.toMillis());

            JsonNode preempted = run(borrower);
            assertThat(preempted.get("preemptions").asInt()).isEqualTo(1);
            assertThat(preempted.get("attempt").asInt()).isEqualTo(2);
            List<String> firstAttempt = new ArrayList<>();
            preempted.get("instances").forEach(i -> {
                if (i.get("attempt").asInt() == 1) {
                    firstAttempt.add(i.get("state").asString());
                }
            });
            assertThat(firstAttempt).hasSize(4).containsOnly("RESOURCE_PREEMPTED");
            String logs = cli("logs", borrower, "--attempt", "1", "--stream", "stdout").out();
            assertThat(logs).contains("saved a checkpoint").contains("Reclaimed");
            Result events = cli("events", borrower);
            assertThat(events.out()).contains("Reclaimed").contains("Preempted");

            await(owner, state("SUCCEEDED"));
            JsonNode again = await(borrower, state("RUNNING"));
            assertThat(again.get("attempt").asInt()).isEqualTo(2);
            assertThat(cli("cancel", borrower, "--wait").exit()).isZero();
            assertThat(cli("get", "runs").out()).contains("RESOURCES");
        } finally {
            server.close();
        }
    }
}
