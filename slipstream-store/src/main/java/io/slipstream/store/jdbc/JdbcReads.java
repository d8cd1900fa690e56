package io.slipstream.store.jdbc;

import io.slipstream.store.CredentialReads;
import io.slipstream.store.DocumentReads;
import io.slipstream.store.RunReads;
import io.slipstream.store.StoreReads;
import io.slipstream.store.UsageReads;

/** The read facets of a {@link JdbcStore}, with their statements run where {@link Handles} says. */
final class JdbcReads implements StoreReads {
    private final RunReads runs;
    private final DocumentReads documents;
    private final CredentialReads credentials;
    private final UsageReads usage;

    /** A transaction's reads. */
    JdbcReads(Handles handles, UnreadableRows unreadable) {
        this(new JdbcRuns(handles, unreadable), handles, unreadable);
    }

    /** A store's own reads, each on a handle of its own: committed rows only, so the active runs may be kept between reads. */
    JdbcReads(Handles handles, UnreadableRows unreadable, ActiveRunRows activeRows, HeldInstances held) {
        this(new JdbcRuns(handles, unreadable, activeRows, held), handles, unreadable);
    }

    private JdbcReads(JdbcRuns runs, Handles handles, UnreadableRows unreadable) {
        this.runs = runs;
        this.documents = new JdbcDocuments(handles, unreadable);
        this.credentials = new JdbcCredentials(handles);
        this.usage = new JdbcUsage(handles);
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
}
