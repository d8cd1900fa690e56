package io.slipstream.store.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.slipstream.api.spec.Document;
import io.slipstream.api.spec.Kind;
import io.slipstream.api.spec.ObjectMeta;
import io.slipstream.api.spec.WorkspaceSpec;
import io.slipstream.store.StoreUnavailableException;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * PostgreSQL stopped under a working store, then started again: every call fails at once as unavailable (not a
 * 30 s wait for a connection, not an error that reads like a bug), and the same store works again by itself.
 */
class PostgresOutageTest {
    private static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");

    @TempDir
    Path pgData;

    @Test
    void anOutageIsUnavailableAndTheStoreRecoversByItself() throws Exception {
        int port;
        try (ServerSocket socket = new ServerSocket(0)) {
            port = socket.getLocalPort();
        }
        EmbeddedPostgres postgres = start(port);
        try (JdbcStore store = JdbcStore.open(postgres.getJdbcUrl("postgres", "postgres"), "postgres", "")) {
            store.write(tx -> tx.createDocument(new Document<>(ObjectMeta.of("team-a", null), new WorkspaceSpec(List.of("alice"))), T0));

            postgres.close(); // an immediate stop: the pooled connections die with it
            long started = System.nanoTime();
            assertThatThrownBy(() -> store.documents().get(Kind.Workspace, null, "team-a"))
                    .isInstanceOf(StoreUnavailableException.class).hasMessageContaining("cannot be reached");
            assertThatThrownBy(store::ping).isInstanceOf(StoreUnavailableException.class);
            assertThatThrownBy(() -> store.write(tx -> tx.documents().list(Kind.Workspace, null)))
                    .isInstanceOf(StoreUnavailableException.class);
            System.out.printf("three calls during the outage answered in %d ms%n", (System.nanoTime() - started) / 1_000_000);

            postgres = start(port);
            await().atMost(Duration.ofSeconds(60)).ignoreExceptions().untilAsserted(store::ping);
            assertThat(store.documents().get(Kind.Workspace, null, "team-a")).isPresent();
        } finally {
            postgres.close();
        }
    }

    private EmbeddedPostgres start(int port) throws Exception {
        return EmbeddedPostgres.builder().setLocaleConfig("locale", "C").setPort(port).setDataDirectory(pgData).setCleanDataDirectory(false).start();
    }
}
