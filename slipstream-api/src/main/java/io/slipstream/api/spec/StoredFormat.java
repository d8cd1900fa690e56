package io.slipstream.api.spec;

import java.util.List;
import java.util.function.UnaryOperator;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * The version of the JSON the server stores for documents and runs' specs ({@code schema_version} of their rows), and
 * how a stored tree of an older version becomes one of {@link #CURRENT}: one upgrade step per older version, applied
 * in turn, so that a row written by any earlier release reads as today's. A row of a version newer than this binary
 * knows (written by a newer server, before a downgrade) is refused by name rather than misread.
 *
 * <p>When the stored form of a record changes in a way plain binding cannot absorb (a field renamed, a value's type
 * changed), bump {@link #CURRENT} and add the step from the version before to {@link #TODAY}'s list.
 */
public final class StoredFormat {
    /** The version this binary writes. */
    public static final int CURRENT = 1;

    /** Today's format: version 1 is the first, so there is nothing to upgrade yet. */
    public static final StoredFormat TODAY = new StoredFormat(List.of());

    private final List<UnaryOperator<ObjectNode>> steps;

    /**
     * A format whose version is {@code steps.size() + 1}: {@code steps.get(i)} turns a tree of version {@code i + 1}
     * into one of version {@code i + 2}. Steps may change the tree they are given.
     */
    public StoredFormat(List<UnaryOperator<ObjectNode>> steps) {
        this.steps = List.copyOf(steps);
    }

    /** The version this format writes and reads. */
    public int current() {
        return steps.size() + 1;
    }

    /** {@code tree}, stored at {@code version}, upgraded to {@link #current()}. */
    public ObjectNode upgrade(JsonNode tree, int version) {
        if (version > current()) {
            throw new NewerVersionException("it is stored in format version " + version + ", newer than this server knows (" + current()
                    + "): it was written by a newer server; run that version, or restore a backup taken before the upgrade");
        }
        if (version < 1) {
            throw new IllegalArgumentException("format version " + version + " does not exist (versions start at 1)");
        }
        if (!(tree instanceof ObjectNode object)) {
            throw new IllegalArgumentException("it is not a JSON object");
        }
        ObjectNode upgraded = object;
        for (int v = version; v < current(); v++) {
            upgraded = steps.get(v - 1).apply(upgraded);
        }
        return upgraded;
    }

    /** A record written by a newer server: reading it would misread what that version meant. */
    public static final class NewerVersionException extends IllegalStateException {
        public NewerVersionException(String message) {
            super(message);
        }
    }
}
