package io.slipstream.api.run;

/**
 * Why an instance's process ended, where the executor knows more than its exit code: a closed set, so that restart rules
 * ({@code faultTolerance.retryOn.reasons}) match a fact, not a text, and read the same on every executor. An instance
 * whose end the executor cannot explain has none. A new cause is a new constant, its description, the job schema's
 * enum ({@code RetryOn.reasons}) and the OpenAPI {@code Instance.endCause}.
 */
public enum EndCause {
    /**
     * The kernel killed it for using more memory than its limit: the local executor sees it in the instance's cgroup,
     * the Kubernetes executor in its container's status ({@code OOMKilled}). Usually exit code 137 (SIGKILL).
     */
    OOMKilled("used more memory than its limit");

    private final String description;

    EndCause(String description) {
        this.description = description;
    }

    /** What it means, in words: {@code used more memory than its limit}. */
    public String description() {
        return description;
    }

    /**
     * How it reads in an instance's reason: {@code OOMKilled: used more memory than its limit}, or with the executor's
     * own {@code detail} instead of the description where it gave one.
     */
    public String explain(String detail) {
        return name() + ": " + (detail == null || detail.isBlank() ? description : detail);
    }
}
