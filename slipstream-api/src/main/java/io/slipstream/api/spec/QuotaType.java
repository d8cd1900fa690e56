package io.slipstream.api.spec;

/** {@code General}: any hardware, shares idle capacity within its quota tree; {@code Dedicated}: one GPU model. */
public enum QuotaType {
    General,
    Dedicated
}
