package io.slipstream.store.jdbc;

import io.slipstream.api.spec.FieldReader;
import io.slipstream.store.Store;
import io.slipstream.store.StoreContext;
import io.slipstream.store.StoreFactory;
import io.slipstream.store.StoreSettings;

/**
 * The stores of {@link JdbcStore}: {@code store: {url: jdbc:NAME:..., username, password}}. {@link H2} without a URL
 * is the embedded store under the data dir (the default); {@link Postgresql} needs one.
 */
public abstract sealed class JdbcStoreFactory implements StoreFactory permits JdbcStoreFactory.H2, JdbcStoreFactory.Postgresql {
    public static final String NAME_H2 = "h2";
    public static final String NAME_POSTGRESQL = "postgresql";

    private final String name;
    private final boolean urlRequired;

    JdbcStoreFactory(String name, boolean urlRequired) {
        this.name = name;
        this.urlRequired = urlRequired;
    }

    @Override
    public final String name() {
        return name;
    }

    @Override
    public final StoreSettings read(FieldReader store) {
        String url = store.string("url", urlRequired, 2048);
        String prefix = "jdbc:" + name + ":";
        if (url != null && !url.startsWith(prefix)) {
            store.problems().add(store.pathOf("url"), "must be a " + prefix + " URL");
        }
        String username = store.string("username", false, 256);
        String password = store.string("password", false, 1024);
        store.finish();
        return url == null ? JdbcStoreSettings.embedded() : new JdbcStoreSettings(name, url, username, password);
    }

    @Override
    public final Store create(StoreSettings settings, StoreContext context) {
        JdbcStoreSettings jdbc = (JdbcStoreSettings) settings;
        return jdbc.url() == null ? JdbcStore.openH2(context.dataDir()) : JdbcStore.open(jdbc.url(), jdbc.username(), jdbc.password());
    }

    @Override
    public final java.util.Optional<io.slipstream.store.StoreFiles> files(StoreSettings settings, StoreContext context) {
        JdbcStoreSettings jdbc = (JdbcStoreSettings) settings;
        return jdbc.url() == null ? java.util.Optional.of(Opening.embeddedFiles(context.dataDir())) : java.util.Optional.empty();
    }

    /** {@code h2}: the embedded store (no URL), or an H2 database at a {@code jdbc:h2:} URL. */
    public static final class H2 extends JdbcStoreFactory {
        public H2() {
            super(NAME_H2, false);
        }
    }

    /** {@code postgresql}: the production store, at a {@code jdbc:postgresql:} URL. */
    public static final class Postgresql extends JdbcStoreFactory {
        public Postgresql() {
            super(NAME_POSTGRESQL, true);
        }
    }
}
