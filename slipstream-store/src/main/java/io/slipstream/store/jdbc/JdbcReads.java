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

    JdbcReads(Handles handles, UnreadableRows unreadable) {
        this.runs = new JdbcRuns(handles, unreadable);
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
