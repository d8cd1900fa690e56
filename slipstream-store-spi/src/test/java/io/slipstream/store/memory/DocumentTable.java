package io.slipstream.store.memory;

import static io.slipstream.store.memory.Stored.micros;

import io.slipstream.api.spec.Document;
import io.slipstream.api.spec.Kind;
import io.slipstream.api.spec.ObjectMeta;
import io.slipstream.api.spec.WorkspaceSpec;
import io.slipstream.store.ConflictException;
import io.slipstream.store.StoredDocument;
import io.slipstream.store.memory.Tables.DocumentKey;
import io.slipstream.store.memory.Tables.ScheduleKey;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

/**
 * Applied documents in an {@link InMemoryStore}, by kind, workspace and name (the JDBC store's {@code DocumentRows}).
 * A workspace's members are read from its document: what the JDBC store's membership table holds.
 */
final class DocumentTable {
    private DocumentTable() {
    }

    static Optional<StoredDocument> get(Tables t, Kind kind, String workspace, String name) {
        return Optional.ofNullable(t.documents.get(new DocumentKey(kind, workspaceKey(workspace), name)));
    }

    static List<StoredDocument> list(Tables t, Kind kind, Set<String> workspaces) {
        if (workspaces != null && workspaces.isEmpty()) {
            return List.of();
        }
        List<StoredDocument> found = new ArrayList<>();
        t.documents.forEach((key, document) -> {
            if (key.kind() == kind && (workspaces == null || workspaces.contains(kind == Kind.Workspace ? key.name() : key.workspace()))) {
                found.add(document);
            }
        });
        return List.copyOf(found);
    }

    static StoredDocument create(Tables t, Document<?> document, Instant now) {
        DocumentKey key = DocumentKey.of(document);
        if (t.documents.containsKey(key)) {
            throw new ConflictException(document.reference() + " already exists");
        }
        requireDistinctMembers(document);
        t.documents().put(key, new StoredDocument(unversioned(document), 1, micros(now), micros(now)));
        return new StoredDocument(unversioned(document), 1, now, now);
    }

    static StoredDocument update(Tables t, Document<?> document, long expectedVersion, Instant now) {
        DocumentKey key = DocumentKey.of(document);
        StoredDocument stored = t.documents.get(key);
        if (stored == null || stored.version() != expectedVersion) {
            throw new ConflictException(document.reference() + " is not at version " + expectedVersion
                    + " (it was changed or deleted meanwhile)");
        }
        requireDistinctMembers(document);
        StoredDocument updated = new StoredDocument(unversioned(document), expectedVersion + 1, stored.createdAt(), micros(now));
        t.documents().put(key, updated);
        return updated;
    }

    static void delete(Tables t, Kind kind, String workspace, String name, long expectedVersion) {
        DocumentKey key = new DocumentKey(kind, workspaceKey(workspace), name);
        StoredDocument stored = t.documents.get(key);
        if (stored == null || stored.version() != expectedVersion) {
            throw new ConflictException(kind + " " + name + " is not at version " + expectedVersion);
        }
        t.documents().remove(key);
        if (kind == Kind.Job) {
            // A job made again under the same name starts its schedule afresh, without catching up on old times.
            t.schedules().remove(new ScheduleKey(workspace, name));
        }
    }

    static Set<String> workspacesOf(Tables t, String user) {
        Set<String> names = new TreeSet<>();
        t.documents.forEach((key, document) -> {
            if (document.document().spec() instanceof WorkspaceSpec workspace && workspace.members().contains(user)) {
                names.add(key.name());
            }
        });
        return names;
    }

    /** Secrets have a table of their own, with sealed values: a Secret document would hold them in clear. */
    static void requireNotSecret(Kind kind) {
        if (kind == Kind.Secret) {
            throw new IllegalArgumentException("a Secret is stored with createSecret, sealed, never as a document");
        }
    }

    /** A member listed twice is one row twice in JdbcStore's membership table: refused the same way. */
    private static void requireDistinctMembers(Document<?> document) {
        if (document.spec() instanceof WorkspaceSpec workspace && new HashSet<>(workspace.members()).size() != workspace.members().size()) {
            throw new ConflictException("it was created by someone else meanwhile: a member of " + document.reference() + " is listed twice");
        }
    }

    private static Document<?> unversioned(Document<?> document) {
        ObjectMeta meta = document.metadata();
        return meta.version() == null ? document : new Document<>(ObjectMeta.of(meta.name(), meta.workspace()), document.spec());
    }

    static String workspaceKey(String workspace) {
        return workspace == null ? "" : workspace;
    }
}
