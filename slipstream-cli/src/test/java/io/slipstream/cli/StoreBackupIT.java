package io.slipstream.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.slipstream.api.codec.Json;
import io.slipstream.api.run.RunState;
import io.slipstream.cli.SlipstreamProcess.Result;
import io.slipstream.cli.SlipstreamProcess.Server;
import io.slipstream.testing.NoProcessLeftBehind;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;

/**
 * Backup and restore, the operator's story: a backup taken with {@code slipstream store backup} while runs are being
 * submitted and run, restored with {@code slipstream store restore} into a new data directory (not while a server holds
 * it), and a server started there: every run acknowledged before the backup is there, those that were running are not
 * left running (their instances are not in the new data directory: lost, with that reason, then their fault tolerance
 * decides), new runs work and old tokens too.
 */
@ExtendWith(NoProcessLeftBehind.class)
class StoreBackupIT {
    @TempDir
    Path work;

    private final HttpClient http = HttpClient.newHttpClient();

    private static String job(String name, String script) {
        return """
                {"jobDocument": {"apiVersion": "slipstream/v1", "kind": "Job", "metadata": {"name": "%s", "workspace": "w"},
                 "spec": {"nodeGroups": [{"name": "main", "resources": {"cpu": 1, "memory": "1Gi"}, "command": ["sh", "-c", %s]}]}}}
                """.formatted(name, Json.mapper().writeValueAsString(script));
    }

    private HttpResponse<String> post(Server server, String path, String token, String body) throws Exception {
        HttpRequest request = HttpRequest.newBuilder(URI.create(server.url() + path)).timeout(Duration.ofSeconds(30))
                .header("Authorization", "Bearer " + token).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body)).build();
        return http.send(request, HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
    }

    private int status(Server server, String path, String token) throws Exception {
        HttpRequest request = HttpRequest.newBuilder(URI.create(server.url() + path)).timeout(Duration.ofSeconds(30))
                .header("Authorization", "Bearer " + token).GET().build();
        return http.send(request, HttpResponse.BodyHandlers.discarding()).statusCode();
    }

    private String submit(Server server, String token, String name, String script) throws Exception {
        HttpResponse<String> response = post(server, "/api/v1/runs", token, job(name, script));
        assertThat(response.statusCode()).as(response.body()).isEqualTo(201);
        return Json.mapper().readTree(response.body()).get("id").asString();
    }

    private Result cli(Server server, String... args) throws Exception {
        List<String> all = new ArrayList<>(List.of(args));
        all.addAll(List.of("--server", server.url(), "--data-dir", server.dataDir().toString()));
        return SlipstreamProcess.cli(work, all.toArray(String[]::new));
    }

    @Test
    void aBackupTakenUnderLoadRestoresIntoANewDataDirectory() throws Exception {
        Path old = work.resolve("old");
        Path backup = work.resolve("backups").resolve("slipstream-store.zip");
        Files.createDirectories(backup.getParent());
        List<String> acknowledged = new ArrayList<>();
        String alice;
        String longRun;
        try (Server server = SlipstreamProcess.startServer(old)) {
            String admin = server.adminToken();
            assertThat(post(server, "/api/v1/apply", admin, """
                    {"apiVersion": "slipstream/v1", "kind": "Workspace", "metadata": {"name": "w"}, "spec": {"members": ["alice"]}}
                    """).statusCode()).isEqualTo(200);
            Result token = cli(server, "token", "create", "--user", "alice");
            assertThat(token.exit()).as(token.err()).isZero();
            alice = token.lastLine();
            longRun = submit(server, admin, "long", "exec sleep 600");
            server.awaitRun(longRun, Duration.ofSeconds(60), run -> run.get("state").asString().equals("RUNNING"));

            // Load: runs submitted one after another, each running a moment, while the backup is taken.
            ConcurrentLinkedQueue<String> submitted = new ConcurrentLinkedQueue<>();
            AtomicBoolean loading = new AtomicBoolean(true);
            Thread load = new Thread(() -> {
                try {
                    for (int i = 0; loading.get(); i++) {
                        submitted.add(submit(server, alice, "load-" + i, "sleep 0.5"));
                        TimeUnit.MILLISECONDS.sleep(50); // a steady stream of submissions, not a flood
                    }
                } catch (Exception e) {
                    throw new AssertionError(e);
                }
            }, "load");
            load.start();
            while (submitted.size() < 10) {
                TimeUnit.MILLISECONDS.sleep(20); // polling: the load has begun
            }
            acknowledged.add(longRun);
            acknowledged.addAll(submitted); // every run acknowledged before the backup starts
            Result backedUp = cli(server, "store", "backup", backup.toString());
            loading.set(false);
            load.join(30_000);
            assertThat(backedUp.exit()).as(backedUp.err()).isZero();
            assertThat(backedUp.out()).contains("wrote a backup of the store to " + backup);
            System.out.println("runs submitted while the backup was taken: " + (submitted.size() - (acknowledged.size() - 1)));

            Result member = cli(server, "store", "backup", work.resolve("mine.zip").toString(), "--token", alice);
            assertThat(member.exit()).as("members may not back up the store").isEqualTo(CliException.REJECTED);
            assertThat(member.err()).contains("only admins can back up the store");
            assertThat(work.resolve("mine.zip")).doesNotExist();

            Result held = SlipstreamProcess.cli(work, "store", "restore", backup.toString(), "--data-dir", old.toString(), "--force");
            assertThat(held.exit()).as("not while a server holds the data directory").isEqualTo(CliException.REJECTED);
            assertThat(held.err()).contains("a server is running on " + old);
        } // stops the server, cancelling what is still active in the old store: not in the backup

        Path restored = work.resolve("restored");
        Result restore = SlipstreamProcess.cli(work, "store", "restore", backup.toString(), "--data-dir", restored.toString());
        assertThat(restore.exit()).as(restore.err()).isZero();
        assertThat(restore.out()).contains("restored the store " + Files.readString(old.resolve("store.id")).strip())
                .contains("copy secret.key and token.pepper");
        for (String kept : List.of("secret.key", "token.pepper", "admin.token")) { // kept with the backup, as docs/operations.md says
            Files.copy(old.resolve(kept), restored.resolve(kept));
        }
        Result again = SlipstreamProcess.cli(work, "store", "restore", backup.toString(), "--data-dir", restored.toString());
        assertThat(again.exit()).isEqualTo(CliException.REJECTED);
        assertThat(again.err()).contains("has a store already").contains("--force");

        try (Server server = SlipstreamProcess.startServer(restored)) {
            String admin = server.adminToken();
            Map<String, String> states = new TreeMap<>();
            for (String id : acknowledged) {
                assertThat(status(server, "/api/v1/runs/" + id, admin)).as("run %s acknowledged before the backup", id).isEqualTo(200);
            }
            // None is left running on an instance that is not here: each ends, or runs again (attempt 2) in this data directory.
            for (String id : acknowledged) {
                JsonNode run = server.awaitRun(id, Duration.ofSeconds(120), r -> RunState.valueOf(r.get("state").asString()).isFinal()
                        || r.get("attempt").asInt() > 1);
                states.put(id, run.get("state").asString() + "/" + run.get("attempt").asInt());
            }
            Result events = cli(server, "events", longRun);
            assertThat(events.exit()).as(events.err()).isZero();
            assertThat(events.out()).contains("is not in this data directory (the store was restored from a backup");
            System.out.println("runs acknowledged before the backup, after the restore: " + states);

            Result whoami = cli(server, "whoami", "--token", alice);
            assertThat(whoami.exit()).as("old tokens work: " + whoami.err()).isZero();
            assertThat(whoami.out()).contains("alice");
            String fresh = submit(server, alice, "fresh", "echo fresh");
            JsonNode done = server.awaitRun(fresh, Duration.ofSeconds(60), run -> RunState.valueOf(run.get("state").asString()).isFinal());
            assertThat(done.get("state").asString()).isEqualTo("SUCCEEDED");
            assertThat(Set.of(restored.resolve("store.id"), restored.resolve("store.watermark"))).allMatch(Files::exists);
        }
    }
}
