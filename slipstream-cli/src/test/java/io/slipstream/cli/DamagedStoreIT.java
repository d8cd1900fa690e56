package io.slipstream.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.slipstream.api.codec.Json;
import io.slipstream.cli.SlipstreamProcess.Result;
import io.slipstream.cli.SlipstreamProcess.Server;
import io.slipstream.testing.NoProcessLeftBehind;
import java.io.RandomAccessFile;
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
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * A damaged store is never served, the operator's story: the server is killed (-9), its store file is cut to half its
 * size, and the next start is refused with the file and what to do (H2 alone opens such a file, silently, with fewer
 * runs); the store is restored from a backup into the same data directory ({@code --force} sets the damaged one
 * aside), and the run that was running when the backup was taken, whose instance still runs here, is adopted.
 */
@ExtendWith(NoProcessLeftBehind.class)
class DamagedStoreIT {
    @TempDir
    Path work;

    private final HttpClient http = HttpClient.newHttpClient();

    private HttpResponse<String> call(Server server, String method, String path, String body) throws Exception {
        HttpRequest request = HttpRequest.newBuilder(URI.create(server.url() + path)).timeout(Duration.ofSeconds(30))
                .header("Authorization", "Bearer " + server.adminToken()).header("Content-Type", "application/json")
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body)).build();
        return http.send(request, HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
    }

    private String submit(Server server, String name, String script) throws Exception {
        String job = """
                {"jobDocument": {"apiVersion": "slipstream/v1", "kind": "Job", "metadata": {"name": "%s", "workspace": "w"},
                 "spec": {"nodeGroups": [{"name": "main", "resources": {"cpu": 1, "memory": "1Gi"}, "command": ["sh", "-c", %s]}]}}}
                """.formatted(name, Json.mapper().writeValueAsString(script));
        HttpResponse<String> response = call(server, "POST", "/api/v1/runs", job);
        assertThat(response.statusCode()).as(response.body()).isEqualTo(201);
        return Json.mapper().readTree(response.body()).get("id").asString();
    }

    private List<String> submitAndFinish(Server server, String prefix, int count) throws Exception {
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            ids.add(submit(server, prefix + "-" + i, "exit 0"));
        }
        for (String id : ids) {
            server.awaitRun(id, Duration.ofSeconds(120), run -> run.get("state").asString().equals("SUCCEEDED"));
        }
        return ids;
    }

    @Test
    void aStoreCutShortAfterAKillIsRefusedAndRestoredFromItsBackup() throws Exception {
        Path data = work.resolve("data");
        Path backup = work.resolve("backup.zip");
        List<String> before;
        List<String> after;
        String longRun;
        String admin;
        Server server = SlipstreamProcess.startServer(data);
        try {
            admin = server.adminToken();
            assertThat(call(server, "POST", "/api/v1/apply", "{\"apiVersion\": \"slipstream/v1\", \"kind\": \"Workspace\", \"metadata\": {\"name\": \"w\"}}")
                    .statusCode()).isEqualTo(200);
            longRun = submit(server, "long", "exec sleep 600");
            server.awaitRun(longRun, Duration.ofSeconds(60), run -> run.get("state").asString().equals("RUNNING"));
            before = submitAndFinish(server, "before", 10);
            Result backedUp = SlipstreamProcess.cli(work, "store", "backup", backup.toString(), "--server", server.url(), "--data-dir", data.toString());
            assertThat(backedUp.exit()).as(backedUp.err()).isZero();
            after = submitAndFinish(server, "after", 20);
        } finally {
            server.kill9(); // its instances live on: the long run's sleep among them
        }

        Path file = data.resolve("store").resolve("slipstream.mv.db");
        try (RandomAccessFile raf = new RandomAccessFile(file.toFile(), "rw")) {
            raf.setLength(raf.length() / 2);
        }
        long cut = Files.size(file);
        Result refused = SlipstreamProcess.cli(work, "server", "--port", "0", "--data-dir", data.toString());
        assertThat(refused.exit()).as(refused.out()).isEqualTo(CliException.RUN_FAILED);
        assertThat(refused.err()).contains("cannot start the server: the store " + file).contains("slipstream store restore");
        assertThat(refused.err().contains("is damaged") || refused.err().contains("holds fewer writes than this data directory has seen"))
                .as(refused.err()).isTrue();
        System.out.println("the refusal: " + refused.err().strip());
        assertThat(Files.size(file)).as("the damaged file is left as it was").isEqualTo(cut);
        assertThat(Files.readString(data.resolve("admin.token")).strip()).as("no new admin token").isEqualTo(admin);

        Result notForced = SlipstreamProcess.cli(work, "store", "restore", backup.toString(), "--data-dir", data.toString());
        assertThat(notForced.exit()).isEqualTo(CliException.REJECTED);
        assertThat(notForced.err()).contains("has a store already");
        Result restored = SlipstreamProcess.cli(work, "store", "restore", backup.toString(), "--data-dir", data.toString(), "--force");
        assertThat(restored.exit()).as(restored.err()).isZero();
        assertThat(restored.out()).contains("the store that was there is kept in " + data.resolve("store.before-restore-"))
                .contains(after.size() + " run(s) that ran here are not in the backup");

        try (Server again = SlipstreamProcess.startServer(data)) {
            for (String id : before) {
                assertThat(call(again, "GET", "/api/v1/runs/" + id, null).statusCode()).as("%s, acknowledged before the backup", id).isEqualTo(200);
            }
            for (String id : after) {
                assertThat(call(again, "GET", "/api/v1/runs/" + id, null).statusCode()).as("%s, after the backup", id).isEqualTo(404);
            }
            // Its instance directory is here and its process still runs: adopted, the same attempt.
            var adopted = again.awaitRun(longRun, Duration.ofSeconds(30), run -> run.get("state").asString().equals("RUNNING")
                    && run.get("instances").get(0).get("state").asString().equals("RUNNING"));
            assertThat(adopted.get("attempt").asInt()).isEqualTo(1);
            String fresh = submit(again, "fresh", "exit 0");
            again.awaitRun(fresh, Duration.ofSeconds(60), run -> run.get("state").asString().equals("SUCCEEDED"));
        } // cancels the long run: nothing is left running
    }
}
