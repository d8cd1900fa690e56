package io.slipstream.store.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.slipstream.api.spec.Document;
import io.slipstream.api.spec.ObjectMeta;
import io.slipstream.api.spec.WorkspaceSpec;
import io.slipstream.store.FencedException;
import io.slipstream.store.FencedStore;
import io.slipstream.store.Leadership;
import io.slipstream.store.Store;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.flywaydb.core.Flyway;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A store upgraded past V14 while a replica led keeps fencing at that replica's epoch: the fence starts at the lease's. */
class LeadershipFenceMigrationTest {
    private static final Instant T0 = Instant.parse("2026-03-01T10:00:00Z");

    @TempDir
    Path dataDir;

    @Test
    void theFenceOfAStoreLedBeforeTheUpgradeIsAtItsLeadersEpoch() throws Exception {
        String url = JdbcStore.h2Url(dataDir);
        Flyway.configure().dataSource(url, "sa", "").locations("classpath:db/migration").target("13").load().migrate();
        try (Connection connection = DriverManager.getConnection(url, "sa", ""); Statement statement = connection.createStatement()) {
            statement.executeUpdate("INSERT INTO leadership (role, holder, epoch, renewed_at, expires_at) VALUES "
                    + "('control-loop', 'a', 7, TIMESTAMP WITH TIME ZONE '2026-03-01 10:00:00+00', TIMESTAMP WITH TIME ZONE '2026-03-01 10:00:10+00')");
        }
        try (Store store = JdbcStore.openH2(dataDir)) {
            new FencedStore(store, 7).write(tx -> tx.createDocument(new Document<>(ObjectMeta.of("team-a", null), new WorkspaceSpec(List.of())), T0));
            assertThatThrownBy(() -> new FencedStore(store, 6).write(tx -> tx.createDocument(new Document<>(ObjectMeta.of("team-b", null), new WorkspaceSpec(List.of())), T0)))
                    .isInstanceOf(FencedException.class);
            assertThat(store.leases().claim("a", T0.plusSeconds(3), Duration.ofSeconds(10))).isEqualTo(new Leadership("a", 7, T0.plusSeconds(3), T0.plusSeconds(13)));
            assertThat(store.leases().claim("b", T0.plusSeconds(20), Duration.ofSeconds(10)).epoch()).isEqualTo(8);
            assertThatThrownBy(() -> new FencedStore(store, 7).write(tx -> tx.createDocument(new Document<>(ObjectMeta.of("team-c", null), new WorkspaceSpec(List.of())), T0)))
                    .isInstanceOf(FencedException.class);
        }
    }
}
