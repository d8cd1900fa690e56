package io.slipstream.store;

import static java.util.Objects.requireNonNull;

import io.slipstream.api.spec.Document;
import io.slipstream.api.spec.ObjectMeta;
import java.time.Instant;

/** An applied document as stored, with its version (incremented by every change) and timestamps. */
public record StoredDocument(Document<?> document, long version, Instant createdAt, Instant updatedAt) {
    public StoredDocument {
        requireNonNull(document, "document is null");
        requireNonNull(createdAt, "createdAt is null");
        requireNonNull(updatedAt, "updatedAt is null");
    }

    /** The document with its stored version in {@code metadata.version}, as the API shows it. */
    public Document<?> versioned() {
        ObjectMeta meta = document.metadata();
        return new Document<>(meta.withVersion(version), document.spec());
    }
}
