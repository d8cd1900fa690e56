package io.slipstream.api.spec;

/**
 * Whom a run's instances can reach over the network, and be reached by. {@code Private}: the run's instances share a
 * network of their own (loopback only), so they reach each other by the addresses in their metadata and nothing
 * outside the run reaches them, nor they it; the API stays reachable through the address in {@code SLIPSTREAM_SERVER}.
 * {@code Host}: the machine's network, as any process on it. A job that does not say gets {@code Private} when one of
 * its node groups names an image, else {@code Host} (docs/containers.md).
 */
public enum NetworkMode {
    Private,
    Host
}
