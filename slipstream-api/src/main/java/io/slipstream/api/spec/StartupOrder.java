package io.slipstream.api.spec;

/**
 * How a run's node groups start. {@code InParallel}: all at once. {@code InOrder}: group k starts only once every
 * instance of group k-1 is ready (its startup probe passed, or it is running when it has none). Either way the
 * resources of every group are reserved when the run is admitted, so a later group never waits for capacity.
 */
public enum StartupOrder {
    InParallel,
    InOrder;

    /** For writing: the default is left out. */
    static final class IsDefault {
        @Override
        public boolean equals(Object value) {
            return value == InParallel;
        }

        @Override
        public int hashCode() {
            return 0;
        }
    }
}
