package io.slipstream.store.memory;

import io.slipstream.store.CredentialReads;
import io.slipstream.store.DocumentReads;
import io.slipstream.store.RunReads;
import io.slipstream.store.StoreReads;
import io.slipstream.store.UsageReads;
import java.util.function.Supplier;

/**
 * The read facets of an {@link InMemoryStore} over the tables {@code tables} gives, once per read: the committed ones
 * (the store's reads), a transaction's working copy, or a view's.
 */
final class InMemoryReads implements StoreReads {
    private final RunReads runs;
    private final DocumentReads documents;
    private final CredentialReads credentials;
    private final UsageReads usage;

    InMemoryReads(Supplier<Tables> tables) {
        this.runs = new InMemoryRuns(tables);
        this.documents = new InMemoryDocuments(tables);
        this.credentials = new InMemoryCredentials(tables);
        this.usage = new InMemoryUsage(tables);
    }

    @Override
    public RunReads runs() {
        return runs;
    }

    @Override
    public DocumentReads documents() {
        return documents;
    }

    @Override
    public CredentialReads credentials() {
        return credentials;
    }

    @Override
    public UsageReads usage() {
        return usage;
    }

    /** A query limited to no workspace answers nothing, without reading (also while a test's outage lasts). */
    static boolean none(java.util.Set<String> workspaces) {
        return workspaces != null && workspaces.isEmpty();
    }
}
