package io.slipstream.store.memory;

import io.slipstream.api.spec.Kind;
import io.slipstream.store.DocumentReads;
import io.slipstream.store.StoredDocument;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.function.Supplier;

/** {@link DocumentReads} over {@link DocumentTable}. */
final class InMemoryDocuments implements DocumentReads {
    private final Supplier<Tables> tables;

    InMemoryDocuments(Supplier<Tables> tables) {
        this.tables = tables;
    }

    @Override
    public Optional<StoredDocument> get(Kind kind, String workspace, String name) {
        return DocumentTable.get(tables.get(), kind, workspace, name);
    }

    @Override
    public List<StoredDocument> list(Kind kind, Set<String> workspaces) {
        return InMemoryReads.none(workspaces) ? List.of() : DocumentTable.list(tables.get(), kind, workspaces);
    }

    @Override
    public Set<String> workspacesOf(String user) {
        return DocumentTable.workspacesOf(tables.get(), user);
    }
}
