package io.slipstream.store.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import io.slipstream.api.spec.Document;
import io.slipstream.api.spec.JobSpec;
import io.slipstream.api.spec.Kind;
import io.slipstream.api.spec.NodeGroupSpec;
import io.slipstream.api.spec.ObjectMeta;
import io.slipstream.api.spec.Resources;
import io.slipstream.store.BaseStoreContractTest;
import io.slipstream.store.Store;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class H2StoreTest extends BaseStoreContractTest {
    @TempDir
    Path dataDir;

    @Override
    protected Store createStore() {
        return JdbcStore.openH2(dataDir);
    }

    @Override
    protected boolean singleProcess() {
        return true; // the embedded file is locked by the process that opened it
    }

    @Override
    protected boolean oneWriterAtATime() {
        return true; // H2CrashConsistencyTest: why
    }

    @Override
    protected java.sql.Connection connection() throws Exception {
        return java.sql.DriverManager.getConnection(JdbcStore.h2Url(dataDir), "sa", "");
    }

    /** H2's sessions carry the statement timeout (set once at connect, not before every statement). */
    @Test
    void everyConnectionHasTheStatementTimeout() {
        try (JdbcStore store = JdbcStore.openH2(dataDir.resolve("another"))) {
            assertThat(store.sessionStatementTimeoutSeconds()).isEqualTo(JdbcStore.STATEMENT_TIMEOUT_S);
        }
    }

    /** What was stored is data: a job beyond what users may send today (more replicas, a longer runtime) still reads. */
    @Test
    void aStoredJobBeyondTodaysLimitsReadsBack() {
        JobSpec job = new JobSpec(0, List.of(new NodeGroupSpec("w", 20_000, null, new Resources(9_000_000, 1L << 60, 100, null),
                List.of("x"), Map.of("A", "1"), null, null, Duration.ofDays(400))));
        Document<JobSpec> document = new Document<>(ObjectMeta.of("old", "team-a"), job);
        try (Store store = createStore()) {
            store.createDocument(document, Instant.parse("2026-01-01T00:00:00Z"));
            assertThat(store.getDocument(Kind.Job, "team-a", "old")).hasValueSatisfying(stored -> assertThat(stored.document()).isEqualTo(document));
        }
    }
}
