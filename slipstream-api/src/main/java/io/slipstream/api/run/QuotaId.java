package io.slipstream.api.run;

import static java.util.Objects.requireNonNull;

/** A quota: a Quota document, named {@code name} in {@code workspace}. Written {@code workspace/name}. */
public record QuotaId(String workspace, String name) implements Comparable<QuotaId> {
    public QuotaId {
        requireNonNull(workspace, "workspace is null");
        requireNonNull(name, "name is null");
    }

    /**
     * The quota {@code reference} names as seen from {@code workspace}: {@code name} is one of the same workspace,
     * {@code workspace/name} one anywhere.
     */
    public static QuotaId of(String workspace, String reference) {
        int slash = reference.indexOf('/');
        return slash < 0 ? new QuotaId(workspace, reference) : new QuotaId(reference.substring(0, slash), reference.substring(slash + 1));
    }

    /** The quota written {@code workspace/name}. */
    public static QuotaId parse(String written) {
        int slash = written.indexOf('/');
        if (slash <= 0 || slash == written.length() - 1) {
            throw new IllegalArgumentException("not a quota id (workspace/name): " + written);
        }
        return new QuotaId(written.substring(0, slash), written.substring(slash + 1));
    }

    // Written out, not left to the record: the generated methods go through method handles that the JIT does not
    // always inline, and quota ids are map keys in every scheduling pass. The same values as the record's own.
    @Override
    public boolean equals(Object other) {
        return other == this || other instanceof QuotaId quota && workspace.equals(quota.workspace) && name.equals(quota.name);
    }

    @Override
    public int hashCode() {
        return 31 * workspace.hashCode() + name.hashCode();
    }

    @Override
    public int compareTo(QuotaId other) {
        int byWorkspace = workspace.compareTo(other.workspace);
        return byWorkspace != 0 ? byWorkspace : name.compareTo(other.name);
    }

    @Override
    public String toString() {
        return workspace + "/" + name;
    }
}
