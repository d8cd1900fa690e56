package io.slipstream.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.slipstream.api.codec.Json;
import io.slipstream.server.support.TestServer;
import io.slipstream.testing.NoProcessLeftBehind;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.OptionalLong;
import java.util.stream.Stream;
import java.util.zip.ZipEntry;
import java.util.zip.ZipInputStream;
import java.util.zip.ZipOutputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import tools.jackson.databind.JsonNode;

/** A backup taken through the API while the server serves restores into a new data directory, whole. */
@ExtendWith(NoProcessLeftBehind.class)
class StoreBackupRestoreTest {
    @TempDir
    Path dir;

    private static String submit(TestServer server, String name, String script) {
        String job = """
                {"jobDocument": {"apiVersion": "slipstream/v1", "kind": "Job", "metadata": {"name": "%s", "workspace": "w"},
                 "spec": {"nodeGroups": [{"name": "main", "resources": {"cpu": 1, "memory": "1Gi"}, "command": ["sh", "-c", %s]}]}}}
                """.formatted(name, Json.mapper().writeValueAsString(script));
        var response = server.post("/api/v1/runs", server.adminToken(), job);
        assertThat(response.status()).as(response.text()).isEqualTo(201);
        return response.json().get("id").asString();
    }

    private static HttpResponse<byte[]> backUp(TestServer server, String token) throws Exception {
        HttpRequest request = HttpRequest.newBuilder(URI.create(server.server().url() + "/api/v1/store/backup"))
                .header("Authorization", "Bearer " + token).POST(HttpRequest.BodyPublishers.noBody()).build();
        return HttpClient.newHttpClient().send(request, HttpResponse.BodyHandlers.ofByteArray());
    }

    @Test
    void aBackupRestoresIntoANewDataDirectoryWithEveryRunAndTheRunningOnesAreNotLeftRunning() throws Exception {
        Path old = dir.resolve("old");
        Path backup = dir.resolve("backup.zip");
        List<String> finished = new ArrayList<>();
        String admin;
        String member;
        String running;
        String after;
        try (TestServer server = TestServer.start(old)) {
            admin = server.adminToken();
            server.post("/api/v1/apply", admin, "apiVersion: slipstream/v1\nkind: Workspace\nmetadata: {name: w}\nspec: {members: [alice]}\n");
            member = server.tokenFor("alice");
            for (int i = 0; i < 5; i++) {
                finished.add(submit(server, "done-" + i, "exit 0"));
            }
            running = submit(server, "long", "exec sleep 600");
            finished.forEach(id -> server.awaitState(admin, id, "SUCCEEDED"));
            server.awaitState(admin, running, "RUNNING");

            assertThat(backUp(server, member).statusCode()).as("members may not").isEqualTo(403);
            HttpResponse<byte[]> response = backUp(server, admin);
            assertThat(response.statusCode()).isEqualTo(200);
            assertThat(response.headers().firstValue("Content-Type")).hasValue("application/zip");
            Files.write(backup, response.body());
            assertThat(entries(backup)).containsExactly("slipstream.mv.db");
            assertThat(Files.list(old.resolve("store")).map(p -> p.getFileName().toString())).as("the temporary copy is gone")
                    .noneMatch(name -> name.startsWith("backup-"));

            after = submit(server, "after", "exit 0"); // not in the backup
            server.awaitState(admin, after, "SUCCEEDED");
            server.post("/api/v1/runs/" + running + "/cancel", admin, "{}");
            server.awaitState(admin, running, "CANCELLED");
        }

        Path restored = dir.resolve("new");
        StoreRestore.Result result = StoreRestore.restore(backup, restored, false, Clock.systemUTC());
        assertThat(result.identity()).isEqualTo(Files.readString(old.resolve(StoreIdentity.FILE)).strip());
        assertThat(result.missingKeyFiles()).containsExactly("secret.key", "token.pepper");
        assertThat(Files.readString(restored.resolve(StoreIdentity.FILE)).strip()).isEqualTo(result.identity());
        assertThat(StoreWatermark.recorded(restored.resolve(StoreWatermark.FILE))).isEqualTo(OptionalLong.of(result.watermark()));
        for (String key : List.of("secret.key", "token.pepper", SlipstreamServer.ADMIN_TOKEN_FILE)) { // kept with the backup
            Files.copy(old.resolve(key), restored.resolve(key));
        }
        // The old data directory is gone (another machine): the running run's instance directory is not here.
        deleteTree(old);

        try (TestServer server = TestServer.start(restored)) {
            for (String id : finished) {
                assertThat(server.get("/api/v1/runs/" + id, admin).json().get("state").asString()).isEqualTo("SUCCEEDED");
            }
            assertThat(server.get("/api/v1/runs/" + after, admin).status()).as("taken after the backup").isEqualTo(404);
            assertThat(server.get("/api/v1/whoami", member).status()).as("old tokens work").isEqualTo(200);
            JsonNode lost = server.awaitRun(admin, running, run -> !run.get("state").asString().equals("RUNNING")
                    || run.get("attempt").asInt() > 1);
            assertThat(server.get("/api/v1/runs/" + running + "/events", admin).text())
                    .contains("is not in this data directory (the store was restored from a backup");
            server.post("/api/v1/runs/" + running + "/cancel", admin, "{}");
            server.awaitRun(admin, running, run -> Stream.of("CANCELLED", "FAILED").anyMatch(run.get("state").asString()::equals));
            assertThat(lost).isNotNull();
            String fresh = submit(server, "fresh", "exit 0");
            server.awaitState(admin, fresh, "SUCCEEDED");
        }

        assertThatThrownBy(() -> StoreRestore.restore(backup, restored, false, Clock.systemUTC())).isInstanceOf(StoreRestore.Refused.class)
                .hasMessageContaining("has a store already").hasMessageContaining("--force");
        StoreRestore.Result forced = StoreRestore.restore(backup, restored, true, Clock.systemUTC());
        assertThat(forced.setAside()).isNotNull();
        assertThat(forced.setAside().resolve("slipstream.mv.db")).as("set aside, never deleted").exists();
        assertThat(forced.setAside().resolve(StoreIdentity.FILE)).exists();
        try (TestServer server = TestServer.start(restored)) {
            assertThat(server.get("/api/v1/runs/" + finished.get(0), admin).status()).isEqualTo(200);
            server.awaitRun(admin, running, run -> !run.get("state").asString().equals("RUNNING") || run.get("attempt").asInt() > 1);
            server.post("/api/v1/runs/" + running + "/cancel", admin, "{}");
            server.awaitRun(admin, running, run -> Stream.of("CANCELLED", "FAILED").anyMatch(run.get("state").asString()::equals));
        }
    }

    @Test
    void whatIsNotABackupIsRefusedAndNothingIsWritten() throws IOException {
        Path notZip = dir.resolve("not.zip");
        Files.writeString(notZip, "hello");
        Path other = dir.resolve("other.zip");
        try (ZipOutputStream zip = new ZipOutputStream(Files.newOutputStream(other))) {
            zip.putNextEntry(new ZipEntry("../evil.mv.db"));
            zip.write(1);
        }
        Path target = dir.resolve("target");
        for (Path file : List.of(notZip, other, dir.resolve("missing.zip"))) {
            assertThatThrownBy(() -> StoreRestore.restore(file, target, false, Clock.systemUTC())).isInstanceOf(IllegalArgumentException.class);
        }
        assertThat(target.resolve("store")).doesNotExist();
        assertThat(target.resolve(StoreIdentity.FILE)).doesNotExist();
    }

    @ParameterizedTest(name = "in use {0}, has a store {1}, records {2}, backup of {3}, force {4}: {5}")
    @CsvSource(nullValues = "-", value = {
            "true,  true,  a, a, true,  a server is running",
            "true,  true,  -, a, false, a server is running",
            "false, true,  a, a, false, has a store already",
            "false, true,  a, b, true,  -",
            "false, false, a, b, false, belongs to the store a",
            "false, false, a, a, false, -",
            "false, false, -, a, false, -",
            "false, false, a, b, true,  -",
    })
    void whatStandsInTheWayOfARestore(boolean inUse, boolean hasStore, String recorded, String backup, boolean force, String says) {
        String refusal = StoreRestore.refusal(Path.of("/data"), Path.of("/data/store/slipstream.mv.db"), inUse, hasStore, recorded, backup, force);
        if (says == null) {
            assertThat(refusal).isNull();
        } else {
            assertThat(refusal).contains(says);
        }
    }

    private static List<String> entries(Path zip) throws IOException {
        List<String> names = new ArrayList<>();
        try (ZipInputStream in = new ZipInputStream(Files.newInputStream(zip))) {
            for (ZipEntry entry = in.getNextEntry(); entry != null; entry = in.getNextEntry()) {
                names.add(entry.getName());
            }
        }
        return names;
    }

    private static void deleteTree(Path root) throws IOException {
        try (Stream<Path> paths = Files.walk(root)) {
            for (Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(path);
            }
        }
    }
}
