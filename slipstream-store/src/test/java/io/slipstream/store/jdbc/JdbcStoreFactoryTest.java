package io.slipstream.store.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import io.slipstream.api.codec.DocumentParser;
import io.slipstream.api.problem.Problem;
import io.slipstream.api.problem.Problems;
import io.slipstream.api.spec.FieldReader;
import io.slipstream.store.Store;
import io.slipstream.store.StoreFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ServiceLoader;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The JDBC stores' part of the config file: the {@code store:} block. */
class JdbcStoreFactoryTest {
    private final Problems problems = new Problems();

    private JdbcStoreSettings read(StoreFactory factory, String yaml) {
        return (JdbcStoreSettings) factory.read(FieldReader.of(DocumentParser.parseOne(yaml.getBytes(StandardCharsets.UTF_8)), "store", problems));
    }

    @Test
    void theServiceLoaderFindsBothByName() {
        assertThat(ServiceLoader.load(StoreFactory.class).stream().map(p -> p.get().name())).containsExactlyInAnyOrder("h2", "postgresql");
    }

    @Test
    void h2WithoutAUrlIsTheEmbeddedStore(@TempDir Path dataDir) {
        StoreFactory h2 = new JdbcStoreFactory.H2();
        JdbcStoreSettings settings = read(h2, "{}");
        assertThat(settings).isEqualTo(JdbcStoreSettings.embedded());
        try (Store store = h2.create(settings, () -> dataDir)) {
            assertThat(store.credentials().hasAdminToken(java.time.Instant.EPOCH)).isFalse();
        }
        assertThat(dataDir.resolve("store")).isDirectory();
    }

    @Test
    void postgresqlNeedsItsUrl() {
        StoreFactory postgresql = new JdbcStoreFactory.Postgresql();
        assertThat(read(postgresql, "url: \"jdbc:postgresql://db/x\"\nusername: u\npassword: secret\n"))
                .isEqualTo(new JdbcStoreSettings("postgresql", "jdbc:postgresql://db/x", "u", "secret"))
                .satisfies(settings -> assertThat(settings.toString()).doesNotContain("secret"));
        assertThat(problems.list()).isEmpty();
        read(postgresql, "username: u\n");
        read(postgresql, "url: \"jdbc:h2:mem:x\"\npasword: x\n");
        assertThat(problems.list()).extracting(Problem::field).containsExactly("store.url", "store.url", "store.pasword");
    }
}
