package io.slipstream.api.spec;

/** Whether a run may preempt lower-priority guaranteed runs of its own quota when the quota is full. */
public enum WithinQuota {
    Never,
    LowerPriority;

    /** For writing: the default is left out. */
    static final class IsDefault {
        @Override
        public boolean equals(Object value) {
            return value == Never;
        }

        @Override
        public int hashCode() {
            return 0;
        }
    }
}
