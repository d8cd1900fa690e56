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

    /** One stored document (never a Secret: its values are stored encrypted, elsewhere). */
    public static Document<?> read(JsonNode tree) {
        Document<?> document = SpecBinding.bind(tree);
        if (document.kind() == Kind.Secret) {
            throw new IllegalStateException("a Secret is never stored as a document");
        }
        return document;
    }

    /** A run's stored effective spec. */
    public static JobSpec readJob(JsonNode tree) {
        return (JobSpec) read(tree).spec();
    }
}
