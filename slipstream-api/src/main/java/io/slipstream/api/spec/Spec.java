package io.slipstream.api.spec;

/** The {@code spec} part of a document; one record per {@link Kind}. */
public sealed interface Spec permits WorkspaceSpec, ShapeSpec, QuotaSpec, JobSpec, SecretSpec, TopologySpec {
    Kind kind();
}
