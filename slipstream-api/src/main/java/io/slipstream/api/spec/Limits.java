package io.slipstream.api.spec;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonProperty;

/**
 * What one instance of a node group may use beyond what it asked for ({@code resources}, which the scheduler counts):
 * {@code limits: {memory: 8Gi}}. What is above the request is a burst, not a guarantee: the scheduler never counts
 * it, and an executor lets an instance have it only where its admin allows (else it refuses the job).
 *
 * @param memoryBytes the most memory one instance may use, at least its memory request; {@code null}: its request
 */
public record Limits(@JsonIgnore Long memoryBytes) {
    public Limits {
        if (memoryBytes != null && memoryBytes < 0) {
            throw new IllegalArgumentException("a memory limit must not be negative: " + memoryBytes);
        }
    }

    /** The document form: {@code memory} a quantity as {@code resources.memory} has it ({@code "8Gi"}). */
    @JsonCreator
    public static Limits of(@JsonProperty("memory") String memory) {
        return new Limits(memory == null ? null : Quantities.parseBytes(memory));
    }

    /** {@code memory} as written. */
    @JsonProperty("memory")
    String writtenMemory() {
        return memoryBytes == null ? null : Quantities.formatBytes(memoryBytes);
    }

    /** Why a memory limit of {@code limitBytes} does not fit a request of {@code requestBytes}, or {@code null}. */
    public static String memoryProblem(long limitBytes, long requestBytes) {
        return limitBytes < requestBytes ? "must be at least the memory request (" + Quantities.formatBytes(requestBytes) + ")" : null;
    }
}
