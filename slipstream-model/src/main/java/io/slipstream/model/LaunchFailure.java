package io.slipstream.model;

/** Why an instance could not be launched: it decides whether a restart could help. */
public enum LaunchFailure {
    /** The executor refused or failed the launch (a node refusing, an image missing): a restart may land elsewhere. */
    EXECUTOR_FAILED("LaunchFailed"),
    /** A Secret its node group refers to is missing or unreadable: a restart would fail the same way. */
    SECRETS_UNAVAILABLE("SecretUnavailable"),
    /**
     * The run asks for identity tokens the server cannot sign ({@code identity.issuer} not set any more, or no signing
     * key): a restart would fail the same way.
     */
    IDENTITY_UNAVAILABLE("IdentityUnavailable");

    private final String label;

    LaunchFailure(String label) {
        this.label = label;
    }

    /** Whether launching again would fail the same way, whatever node it lands on (nothing ran: no budget is spent). */
    public boolean repeats() {
        return switch (this) {
            case EXECUTOR_FAILED -> false;
            case SECRETS_UNAVAILABLE, IDENTITY_UNAVAILABLE -> true;
        };
    }

    /** How it reads in an instance's reason. */
    public String label() {
        return label;
    }
}
