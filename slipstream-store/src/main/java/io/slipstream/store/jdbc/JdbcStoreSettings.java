package io.slipstream.store.jdbc;

import io.slipstream.store.StoreSettings;

/**
 * Where a {@link JdbcStore} is.
 *
 * @param store    {@code h2} or {@code postgresql}
 * @param url      its JDBC URL, or {@code null} (H2 only): the embedded store under the data dir
 */
public record JdbcStoreSettings(String store, String url, String username, String password) implements StoreSettings {
    public static JdbcStoreSettings embedded() {
        return new JdbcStoreSettings(JdbcStoreFactory.NAME_H2, null, null, null);
    }

    @Override
    public String toString() {
        return "JdbcStoreSettings[store=" + store + ", url=" + url + ", username=" + username + ", password=" + (password == null ? null : "***") + "]";
    }
}
