package io.slipstream.api.problem;

import static java.util.Objects.requireNonNull;

/**
 * One thing wrong with an input document: the path of the field ({@code spec.nodeGroups[0].replicas})
 * and what is wrong with it, in words a user can act on.
 */
public record Problem(String field, String message) {
    public Problem {
        requireNonNull(field, "field is null");
        requireNonNull(message, "message is null");
    }

    @Override
    public String toString() {
        return field.isEmpty() ? message : field + ": " + message;
    }
}
