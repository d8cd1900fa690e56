package io.slipstream.api.spec;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonProperty;

/**
 * How a quota shares its pool's idle capacity with the other quotas at its level (docs/quotas.md, "Fair sharing"):
 * borrowers are served lowest share first, a share being what a quota borrows divided by its {@code weight}. A weight
 * of 0 borrows only what no other quota of its pool asks for.
 */
public record FairSharing(double weight) {
    /** The most a weight may be: beyond it a share's arithmetic would lose its figures. */
    public static final double MAX_WEIGHT = 1_000_000;
    /** The least a weight other than 0 may be: below it a share overflows to infinity and reads as weight 0's. */
    public static final double MIN_WEIGHT = 1e-6;
    public static final FairSharing DEFAULT = new FairSharing(1);

    public FairSharing {
        if (!(weight >= 0 && weight <= MAX_WEIGHT) || (weight > 0 && weight < MIN_WEIGHT)) { // NaN fails too
            throw new IllegalArgumentException("weight must be 0, or between " + MIN_WEIGHT + " and " + MAX_WEIGHT + " (is " + weight + ")");
        }
        weight = weight + 0.0; // -0.0 is 0
    }

    /** The document form: a weight not given is 1. */
    @JsonCreator
    public static FairSharing of(@JsonProperty("weight") Double weight) {
        return weight == null ? DEFAULT : new FairSharing(weight);
    }

    /** For writing: the default is left out, so quotas without the field read back as they were written. */
    static final class IsDefault {
        @Override
        public boolean equals(Object value) {
            return value == null || DEFAULT.equals(value);
        }

        @Override
        public int hashCode() {
            return 0;
        }
    }
}
