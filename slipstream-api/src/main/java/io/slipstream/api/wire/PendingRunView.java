package io.slipstream.api.wire;

/**
 * A queued run of a quota, in the order the scheduler considers them: what it asks for and, once a cycle of the
 * leading replica has seen it, why it waits ({@code position} counts within its quota from 1).
 */
public record PendingRunView(String id, String job, int priority, String createdAt, ResourcesView resources, String idleResources,
                             Integer position, String reason, String message) {
}
