package io.slipstream.store.jdbc;

import java.util.Set;
import java.util.function.Function;
import org.jdbi.v3.core.Handle;

/** Where a facet's statements run: on a handle of their own (a store's reads) or on an open transaction's. */
interface Handles {
    <T> T with(Function<Handle, T> work);

    /** A query limited to no workspace answers nothing, without a connection (also while the database is away). */
    static boolean none(Set<String> workspaces) {
        return workspaces != null && workspaces.isEmpty();
    }
}
