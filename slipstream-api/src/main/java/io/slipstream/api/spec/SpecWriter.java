package io.slipstream.api.spec;

import tools.jackson.databind.node.ObjectNode;

/**
 * Writes documents back in the form users write them (quantities as {@code "64Gi"}), readable by {@link SpecReader}
 * and {@link StoredSpecs}: Jackson, with the records' own annotations ({@link SpecBinding}). A Secret is never
 * written: its values exist in clear only in memory (the server stores them encrypted, and shows them as {@code ***}).
 */
public final class SpecWriter {
    private SpecWriter() {
    }

    public static ObjectNode write(Document<?> document) {
        return SpecBinding.write(document);
    }

    public static ObjectNode writeSpec(Spec spec) {
        if (spec instanceof SecretSpec) {
            throw new IllegalArgumentException("a Secret is never written as a document: its values stay encrypted");
        }
        return SpecBinding.mapper().valueToTree(spec);
    }
}
