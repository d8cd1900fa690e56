package io.slipstream.api.spec;

/**
 * Whether a job may run on idle capacity (other quotas' unused guarantees, or capacity no quota guarantees).
 * {@code Disabled}: only within its quota's guarantee. {@code Acceptable}: within its guarantee if there is room
 * (then it is never reclaimed), else on idle capacity. {@code OnlyIdle}: only on idle capacity, whatever its quota's size.
 */
public enum IdleMode {
    Disabled,
    Acceptable,
    OnlyIdle;

    public boolean mayUseGuarantee() {
        return this != OnlyIdle;
    }

    public boolean mayBorrow() {
        return this != Disabled;
    }
}
