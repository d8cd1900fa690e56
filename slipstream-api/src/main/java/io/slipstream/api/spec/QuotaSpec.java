package io.slipstream.api.spec;

import static java.util.Objects.requireNonNull;

/**
 * Guaranteed resources of a workspace: {@code min} is guaranteed, {@code max} (optional) caps guaranteed use,
 * {@code parent} (optional) places the quota in a tree. Enforced by the quota scheduler.
 */
public record QuotaSpec(QuotaType type, Resources min, Resources max, String parent) implements Spec {
    /** A dimension of {@code max} that is not capped holds this (or {@link Long#MAX_VALUE} for cpu and memory). */
    public static final int UNCAPPED = Integer.MAX_VALUE;

    public QuotaSpec {
        requireNonNull(type, "type is null");
        requireNonNull(min, "min is null");
    }

    @Override
    public Kind kind() {
        return Kind.Quota;
    }
}
