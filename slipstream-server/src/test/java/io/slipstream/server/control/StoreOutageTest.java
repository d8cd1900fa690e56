package io.slipstream.server.control;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.slipstream.api.codec.Json;
import io.slipstream.server.support.TestServer;
import io.slipstream.store.jdbc.JdbcStoreSettings;
import io.slipstream.testing.NoProcessLeftBehind;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * PostgreSQL stopped under a server with a running run, then started again. Meanwhile every call that needs the
 * store is a 503 with Retry-After (never a 500, never a wait of Hikari's default 30 s), {@code /readyz} says why,
 * {@code /healthz} says the process lives; the instance that ended during the outage is recorded once the store is
 * back, and new runs work.
 */
@ExtendWith(NoProcessLeftBehind.class)
class StoreOutageTest {
    @TempDir
    Path dataDir;
    @TempDir
    Path pgData;

    @Test
    void anOutageIsAnsweredWith503AndTheServerResumesByItself() throws Exception {
        int port;
        try (ServerSocket socket = new ServerSocket(0)) {
            port = socket.getLocalPort();
        }
        EmbeddedPostgres postgres = startPostgres(port);
        Path gate = dataDir.resolve("gate");
        Files.createDirectories(dataDir);
        assertThat(new ProcessBuilder("mkfifo", gate.toString()).start().waitFor()).isZero();
        JdbcStoreSettings store = new JdbcStoreSettings("postgresql", postgres.getJdbcUrl("postgres", "postgres"), "postgres", "");
        try (TestServer server = TestServer.start(dataDir, config -> config.withStore(store))) {
            String admin = server.adminToken();
            assertThat(server.post("/api/v1/apply", admin, "apiVersion: slipstream/v1\nkind: Workspace\nmetadata: {name: w}\n").status()).isEqualTo(200);
            String run = submit(server, "waits", "echo started; read line < " + gate + "; exit 0");
            server.awaitState(admin, run, "RUNNING");

            postgres.close();
            long started = System.nanoTime();
            for (String path : new String[] {"/api/v1/runs", "/api/v1/runs/" + run, "/api/v1/whoami", "/api/v1/quotas"}) {
                TestServer.Response response = server.get(path, admin);
                assertThat(response.status()).as(path + ": " + response.text()).isEqualTo(503);
                assertThat(response.headers().firstValue("Retry-After")).as(path).hasValue("2");
                assertThat(response.json().get("code").asString()).isEqualTo("STORE_UNAVAILABLE");
            }
            TestServer.Response submitted = server.post("/api/v1/runs", admin, job("during", "true"));
            assertThat(submitted.status()).as(submitted.text()).isEqualTo(503);
            System.out.printf("five calls during the outage answered in %d ms in all%n", (System.nanoTime() - started) / 1_000_000);
            TestServer.Response ready = server.get("/readyz", null);
            assertThat(ready.status()).isEqualTo(503);
            assertThat(ready.json().get("reason").asString()).contains("store cannot be reached");
            assertThat(server.get("/healthz", null).status()).isEqualTo(200);

            Files.writeString(gate, "go\n"); // the instance ends while nothing can be recorded

            postgres = startPostgres(port);
            await().atMost(Duration.ofSeconds(60)).until(() -> server.get("/readyz", null).status() == 200);
            server.awaitState(admin, run, "SUCCEEDED");
            String next = submit(server, "after", "exit 0");
            server.awaitState(admin, next, "SUCCEEDED");
        } finally {
            postgres.close();
        }
    }

    private static String submit(TestServer server, String name, String script) {
        TestServer.Response response = server.post("/api/v1/runs", server.adminToken(), job(name, script));
        assertThat(response.status()).as(response.text()).isEqualTo(201);
        return response.json().get("id").asString();
    }

    private static String job(String name, String script) {
        return """
                {"jobDocument": {"apiVersion": "slipstream/v1", "kind": "Job", "metadata": {"name": "%s", "workspace": "w"},
                 "spec": {"nodeGroups": [{"name": "main", "resources": {"cpu": 1, "memory": "1Gi"}, "command": ["sh", "-c", %s]}]}}}
                """.formatted(name, Json.mapper().writeValueAsString(script));
    }

    private EmbeddedPostgres startPostgres(int port) throws Exception {
        return EmbeddedPostgres.builder().setLocaleConfig("locale", "C").setPort(port).setDataDirectory(pgData).setCleanDataDirectory(false).start();
    }
}
