package io.slipstream.executor;

import static java.util.Objects.requireNonNull;

import java.util.List;

/**
 * What an executor holds instances to beyond the scheduler's accounting.
 *
 * @param enforced the limits enforced, by name ({@code memory}, {@code cpu}, {@code pids}, {@code devices}, {@code kill})
 * @param summary  one line: how, and what is not enforced and why (the server's start line, {@code /readyz},
 *                 {@code get nodes})
 */
public record ResourceEnforcement(List<String> enforced, String summary) {
    public ResourceEnforcement {
        enforced = List.copyOf(enforced);
        requireNonNull(summary, "summary is null");
    }
}
