package io.slipstream.api.spec;

/** The kinds of documents users apply. */
public enum Kind {
    Workspace(false),
    Shape(false),
    Quota(true),
    Job(true),
    /** Values jobs refer to; kept encrypted, never shown (see {@link SecretSpec}). */
    Secret(true),
    /** The cluster's levels (block, rack, host) by node label; one per cluster (see {@link TopologySpec}). */
    Topology(false);

    private final boolean workspaced;

    Kind(boolean workspaced) {
        this.workspaced = workspaced;
    }

    /** Whether objects of this kind live inside a workspace ({@code metadata.workspace} is required). */
    public boolean workspaced() {
        return workspaced;
    }
}
