package io.slipstream.store.jdbc;

import io.slipstream.api.spec.Kind;
import io.slipstream.store.DocumentReads;
import io.slipstream.store.StoredDocument;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/** {@link DocumentReads} over {@link DocumentRows}. */
final class JdbcDocuments implements DocumentReads {
    private final Handles handles;
    private final UnreadableRows unreadable;

    JdbcDocuments(Handles handles, UnreadableRows unreadable) {
        this.handles = handles;
        this.unreadable = unreadable;
    }

    @Override
    public Optional<StoredDocument> get(Kind kind, String workspace, String name) {
        return handles.with(h -> DocumentRows.get(h, kind, workspace, name)).map(unreadable::orThrow);
    }

    @Override
    public List<StoredDocument> list(Kind kind, Set<String> workspaces) {
        return Handles.none(workspaces) ? List.of() : unreadable.readable(handles.with(h -> DocumentRows.list(h, kind, workspaces)));
    }

    @Override
    public Set<String> workspacesOf(String user) {
        return handles.with(h -> DocumentRows.workspacesOf(h, user));
    }
}
