package io.slipstream.api.spec;

import tools.jackson.databind.JsonNode;

/**
 * Reads what the server stored (documents, runs' effective specs) as data: plain binding, lenient to fields it does not
 * know, with no limits and none of the checks of user input. Tightening a rule for what users may send therefore never
 * makes a stored job or run unreadable.
 */
public final class StoredSpecs {
    private StoredSpecs() {
    }

    /** One stored document of today's {@link StoredFormat} (never a Secret: its values are stored encrypted, elsewhere). */
    public static Document<?> read(JsonNode tree) {
        Document<?> document = SpecBinding.bind(tree);
        if (document.kind() == Kind.Secret) {
            throw new IllegalStateException("a Secret is never stored as a document");
        }
        return document;
    }

    /** A stored document written at {@code version} of the {@link StoredFormat}: upgraded to today's, then bound. */
    public static Document<?> read(JsonNode tree, int version) {
        return read(StoredFormat.TODAY.upgrade(tree, version));
    }

    /** A run's stored effective spec. */
    public static JobSpec readJob(JsonNode tree) {
        return readJob(tree, StoredFormat.CURRENT);
    }

    /** A run's stored effective spec, written at {@code version} of the {@link StoredFormat}. */
    public static JobSpec readJob(JsonNode tree, int version) {
        Document<?> document = read(tree, version);
        if (!(document.spec() instanceof JobSpec job)) {
            throw new IllegalStateException("a run's spec is a Job, not a " + document.kind());
        }
        return job;
    }
}
