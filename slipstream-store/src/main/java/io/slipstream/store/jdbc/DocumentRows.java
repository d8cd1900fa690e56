package io.slipstream.store.jdbc;

import static io.slipstream.store.jdbc.Columns.instant;
import static io.slipstream.store.jdbc.Columns.time;

import io.slipstream.api.codec.Json;
import io.slipstream.api.spec.Document;
import io.slipstream.api.spec.Kind;
import io.slipstream.api.spec.ObjectMeta;
import io.slipstream.api.spec.SpecWriter;
import io.slipstream.api.spec.StoredFormat;
import io.slipstream.api.spec.StoredSpecs;
import io.slipstream.api.spec.WorkspaceSpec;
import io.slipstream.store.ConflictException;
import io.slipstream.store.StoredDocument;
import io.slipstream.store.jdbc.UnreadableRows.Read;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.statement.StatementContext;

/**
 * The SQL of applied documents: {@code documents} (one row per kind, workspace and name; {@code ""} is the workspace of
 * cluster-wide kinds), the body as the document's JSON at {@link StoredFormat#CURRENT}, compare-and-set on
 * {@code version}; and {@code workspace_members}, a Workspace's members as rows (written with its document, in its
 * transaction), which {@link #workspacesOf} reads. A row that cannot be read is returned as such ({@link Read}).
 */
final class DocumentRows {
    private DocumentRows() {
    }

    static Optional<Read<StoredDocument>> get(Handle h, Kind kind, String workspace, String name) {
        return h.createQuery("SELECT * FROM documents WHERE kind = :kind AND workspace = :workspace AND name = :name")
                .bind("kind", kind.name())
                .bind("workspace", workspaceKey(workspace))
                .bind("name", name)
                .map(DocumentRows::document)
                .findOne();
    }

    static List<Read<StoredDocument>> list(Handle h, Kind kind, Set<String> workspaces) {
        if (workspaces != null && workspaces.isEmpty()) {
            return List.of();
        }
        var query = h.createQuery("SELECT * FROM documents WHERE kind = :kind"
                + (workspaces == null ? "" : kind == Kind.Workspace ? " AND name IN (<workspaces>)" : " AND workspace IN (<workspaces>)")
                + " ORDER BY workspace, name");
        query.bind("kind", kind.name());
        if (workspaces != null) {
            query.bindList("workspaces", new ArrayList<>(workspaces));
        }
        return query.map(DocumentRows::document).list();
    }

    /** {@link io.slipstream.store.StoreTx#createDocument}, inside the caller's transaction. */
    static StoredDocument create(Handle h, Document<?> document, Instant now) {
        requireNotSecret(document.kind());
        boolean exists = h.createQuery("SELECT COUNT(*) FROM documents WHERE kind = :kind AND workspace = :workspace AND name = :name")
                .bind("kind", document.kind().name())
                .bind("workspace", workspaceKey(document.workspace()))
                .bind("name", document.name())
                .mapTo(Long.class).one() > 0;
        if (exists) {
            throw new ConflictException(document.reference() + " already exists");
        }
        time(time(h.createUpdate("INSERT INTO documents (kind, workspace, name, version, body, schema_version, created_at, updated_at) "
                                + "VALUES (:kind, :workspace, :name, 1, :body, :schemaVersion, :created, :updated)")
                        .bind("schemaVersion", StoredFormat.CURRENT)
                        .bind("kind", document.kind().name())
                        .bind("workspace", workspaceKey(document.workspace()))
                        .bind("name", document.name())
                        .bind("body", body(document)), "created", now), "updated", now)
                .execute();
        syncMembers(h, document);
        return new StoredDocument(unversioned(document), 1, now, now);
    }

    /** {@link io.slipstream.store.StoreTx#updateDocument}, inside the caller's transaction: the document as stored now. */
    static Read<StoredDocument> update(Handle h, Document<?> document, long expectedVersion, Instant now) {
        requireNotSecret(document.kind());
        int updated = time(h.createUpdate("UPDATE documents SET body = :body, schema_version = :schemaVersion, version = version + 1, "
                        + "updated_at = :updated WHERE kind = :kind AND workspace = :workspace AND name = :name AND version = :version")
                .bind("schemaVersion", StoredFormat.CURRENT)
                .bind("kind", document.kind().name())
                .bind("workspace", workspaceKey(document.workspace()))
                .bind("name", document.name())
                .bind("version", expectedVersion)
                .bind("body", body(document)), "updated", now)
                .execute();
        if (updated == 0) {
            throw new ConflictException(document.reference() + " is not at version " + expectedVersion
                    + " (it was changed or deleted meanwhile)");
        }
        syncMembers(h, document);
        return get(h, document.kind(), document.workspace(), document.name()).orElseThrow();
    }

    /** {@link io.slipstream.store.StoreTx#deleteDocument}, inside the caller's transaction. */
    static void delete(Handle h, Kind kind, String workspace, String name, long expectedVersion) {
        int deleted = h.createUpdate("DELETE FROM documents WHERE kind = :kind AND workspace = :workspace AND name = :name AND version = :version")
                .bind("kind", kind.name())
                .bind("workspace", workspaceKey(workspace))
                .bind("name", name)
                .bind("version", expectedVersion)
                .execute();
        if (deleted == 0) {
            throw new ConflictException(kind + " " + name + " is not at version " + expectedVersion);
        }
        if (kind == Kind.Workspace) {
            h.createUpdate("DELETE FROM workspace_members WHERE workspace = :workspace").bind("workspace", name).execute();
        }
        if (kind == Kind.Job) {
            ScheduleRows.forget(h, workspace, name); // a job made again under the same name starts its schedule afresh
        }
    }

    static Set<String> workspacesOf(Handle h, String user) {
        return new TreeSet<>(h.createQuery("SELECT workspace FROM workspace_members WHERE user_name = :user")
                .bind("user", user)
                .mapTo(String.class)
                .list());
    }

    /** Secrets have a table of their own, with sealed values: a Secret document would hold them in clear. */
    private static void requireNotSecret(Kind kind) {
        if (kind == Kind.Secret) {
            throw new IllegalArgumentException("a Secret is stored with createSecret, sealed, never as a document");
        }
    }

    private static void syncMembers(Handle h, Document<?> document) {
        if (document.spec() instanceof WorkspaceSpec workspace) {
            h.createUpdate("DELETE FROM workspace_members WHERE workspace = :workspace").bind("workspace", document.name()).execute();
            for (String member : workspace.members()) {
                h.createUpdate("INSERT INTO workspace_members (workspace, user_name) VALUES (:workspace, :user)")
                        .bind("workspace", document.name())
                        .bind("user", member)
                        .execute();
            }
        }
    }

    private static String workspaceKey(String workspace) {
        return workspace == null ? "" : workspace;
    }

    private static String body(Document<?> document) {
        return SpecWriter.write(unversioned(document)).toString();
    }

    private static Document<?> unversioned(Document<?> document) {
        ObjectMeta meta = document.metadata();
        return meta.version() == null ? document : new Document<>(ObjectMeta.of(meta.name(), meta.workspace()), document.spec());
    }

    private static Read<StoredDocument> document(ResultSet rs, StatementContext ctx) throws SQLException {
        String workspace = rs.getString("workspace");
        String record = rs.getString("kind") + " " + (workspace.isEmpty() ? "" : workspace + "/") + rs.getString("name");
        String body = rs.getString("body");
        int schemaVersion = rs.getInt("schema_version");
        long version = rs.getLong("version");
        Instant created = instant(rs, "created_at");
        Instant updated = instant(rs, "updated_at");
        try {
            return new Read<>(new StoredDocument(StoredSpecs.read(Json.mapper().readTree(body), schemaVersion), version, created, updated), null);
        } catch (RuntimeException e) {
            return new Read<>(null, UnreadableRows.of(record, workspace.isEmpty() ? null : workspace, e));
        }
    }
}
