package io.slipstream.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.slipstream.api.codec.Json;
import io.slipstream.cli.SlipstreamProcess.Result;
import io.slipstream.cli.SlipstreamProcess.Server;
import io.slipstream.testing.NoProcessLeftBehind;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;

/**
 * Two replicas over one PostgreSQL store and one data directory take turns: the first leads, the second serves the
 * API as a standby (and takes writes: they are store writes); the leader frozen with SIGSTOP past its lease is
 * replaced, the new leader adopts the running instances without starting them again, and the old one, thawed with
 * SIGCONT, finds itself fenced and stands by; a leader killed with -9 is replaced too. Every instance starts once.
 */
@ExtendWith(NoProcessLeftBehind.class)
class ReplicasIT {
    private static final Duration LEASE = Duration.ofSeconds(3);
    private static final Duration TIMEOUT = Duration.ofSeconds(60);

    @TempDir
    Path work;

    private final HttpClient http = HttpClient.newHttpClient();

    @Test
    void replicasTakeTurnsAndAFencedLeaderStartsNothing() throws Exception {
        try (EmbeddedPostgres postgres = EmbeddedPostgres.builder().setLocaleConfig("locale", "C").start()) {
            Path config = Files.writeString(work.resolve("replica.yaml"), """
                    store: {url: "%s", username: postgres}
                    instances: {gracePeriod: 2s}
                    leadership: {lease: %ds}
                    """.formatted(postgres.getJdbcUrl("postgres", "postgres"), LEASE.toSeconds()));
            Path data = work.resolve("data");
            Server a = SlipstreamProcess.startServer(data, "--config", config.toString());
            Server b = null;
            try {
                String token = a.adminToken();
                JsonNode aReady = awaitReady(a, token, r -> "leader".equals(r.path("role").asString()));
                b = SlipstreamProcess.startServer(data, "--config", config.toString());
                JsonNode bReady = awaitReady(b, token, r -> "standby".equals(r.path("role").asString()));
                assertThat(bReady.get("leader").asString()).isEqualTo(aReady.get("leader").asString());
                Result leader = SlipstreamProcess.cli(work, "get", "leader", "--server", b.url(), "--token", token);
                assertThat(leader.exit()).as(leader.err()).isZero();
                assertThat(leader.out()).contains(aReady.get("leader").asString()).contains("leading");

                call(a, token, "POST", "/api/v1/apply", "apiVersion: slipstream/v1\nkind: Workspace\nmetadata: {name: w}\n");
                String first = submit(b, token, "first"); // through the standby
                awaitRun(b, token, first, run -> run.get("state").asString().equals("RUNNING"));

                signal(a, "STOP"); // frozen past its lease, as a long GC pause or a stalled VM would
                long stopped = System.nanoTime();
                JsonNode taken = awaitReady(b, token, r -> "leader".equals(r.path("role").asString()));
                System.out.printf("takeover after SIGSTOP of the leader: %d ms (lease %d s)%n", (System.nanoTime() - stopped) / 1_000_000, LEASE.toSeconds());
                assertThat(taken.get("epoch").asLong()).isGreaterThan(aReady.get("epoch").asLong());
                String second = submit(b, token, "second");
                awaitRun(b, token, second, run -> run.get("state").asString().equals("RUNNING"));

                signal(a, "CONT");
                awaitLog(a, "no longer leads");
                JsonNode aAfter = awaitReady(a, token, r -> "standby".equals(r.path("role").asString()));
                assertThat(aAfter.get("leader").asString()).isEqualTo(taken.get("leader").asString());
                for (String run : new String[] {first, second}) {
                    assertThat(startsIn(b, token, run)).as("%s started once", run).isEqualTo(1);
                    assertThat(runOf(b, token, run).get("state").asString()).isEqualTo("RUNNING");
                }

                b.kill9();
                long killed = System.nanoTime();
                JsonNode back = awaitReady(a, token, r -> "leader".equals(r.path("role").asString()));
                System.out.printf("takeover after kill -9 of the leader: %d ms (lease %d s)%n", (System.nanoTime() - killed) / 1_000_000, LEASE.toSeconds());
                assertThat(back.get("epoch").asLong()).isGreaterThan(taken.get("epoch").asLong());
                for (String run : new String[] {first, second}) {
                    call(a, token, "POST", "/api/v1/runs/" + run + "/cancel", "{}");
                }
                for (String run : new String[] {first, second}) {
                    awaitRun(a, token, run, r -> r.get("state").asString().equals("CANCELLED"));
                    assertThat(startsIn(a, token, run)).as("%s started once", run).isEqualTo(1);
                }
            } finally {
                signal(a, "CONT");
                if (b != null) {
                    b.close();
                }
                a.close();
            }
        }
    }

    private String submit(Server server, String token, String name) throws Exception {
        String job = """
                {"jobDocument": {"apiVersion": "slipstream/v1", "kind": "Job", "metadata": {"name": "%s", "workspace": "w"},
                 "spec": {"nodeGroups": [{"name": "main", "resources": {"cpu": 1, "memory": "1Gi"},
                  "command": ["sh", "-c", "echo started; exec sleep 600"]}]}}}
                """.formatted(name);
        JsonNode run = Json.mapper().readTree(call(server, token, "POST", "/api/v1/runs", job));
        return run.get("id").asString();
    }

    /** How many times the run's instance printed that it started: a second launch would print it again. */
    private long startsIn(Server server, String token, String run) throws Exception {
        return call(server, token, "GET", "/api/v1/runs/" + run + "/logs", null).lines().filter(line -> line.endsWith(" started")).count();
    }

    private JsonNode runOf(Server server, String token, String run) throws Exception {
        return Json.mapper().readTree(call(server, token, "GET", "/api/v1/runs/" + run, null));
    }

    private void awaitRun(Server server, String token, String run, Predicate<JsonNode> done) throws Exception {
        server.awaitRun(run, TIMEOUT, token, done);
    }

    private JsonNode awaitReady(Server server, String token, Predicate<JsonNode> done) throws Exception {
        long deadline = System.nanoTime() + TIMEOUT.toNanos();
        JsonNode last = null;
        while (System.nanoTime() < deadline) {
            try {
                last = Json.mapper().readTree(call(server, null, "GET", "/readyz", null));
                if (done.test(last)) {
                    return last;
                }
            } catch (java.io.IOException notYet) {
                // answered nothing yet
            }
            TimeUnit.MILLISECONDS.sleep(100); // polling with a deadline
        }
        throw new AssertionError("readiness of " + server.url() + " never got there; last: " + last + "\n" + Files.readString(server.log()));
    }

    private void awaitLog(Server server, String text) throws Exception {
        long deadline = System.nanoTime() + TIMEOUT.toNanos();
        while (!Files.readString(server.log()).contains(text)) {
            assertThat(System.nanoTime()).as("'%s' in the log of %s", text, server.url()).isLessThan(deadline);
            TimeUnit.MILLISECONDS.sleep(100); // polling with a deadline
        }
    }

    private String call(Server server, String token, String method, String path, String body) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(server.url() + path)).timeout(Duration.ofSeconds(30))
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
        if (token != null) {
            request.header("Authorization", "Bearer " + token);
        }
        if (body != null) {
            request.header("Content-Type", body.startsWith("{") ? "application/json" : "application/yaml");
        }
        HttpResponse<String> response = http.send(request.build(), HttpResponse.BodyHandlers.ofString());
        if (response.statusCode() >= 400) {
            throw new AssertionError(method + " " + path + " -> " + response.statusCode() + ": " + response.body());
        }
        return response.body();
    }

    private static void signal(Server server, String signal) throws Exception {
        if (server.process().isAlive()) {
            new ProcessBuilder("kill", "-" + signal, Long.toString(server.process().pid())).inheritIO().start().waitFor();
        }
    }
}
