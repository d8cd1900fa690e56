package io.slipstream.simulator.input;

import io.slipstream.api.spec.Durations;
import java.time.Duration;

/**
 * A policy's placement rule ({@code policies[i].placement}): every gang of at least {@code minInstances} instances is
 * placed in one domain of {@code level} ({@code required}), or preferably so. A gang that no domain of the level could
 * hold even empty is placed at the narrowest broader level one of whose domains could (an 8-node gang with racks of 4:
 * in one block), and left unconstrained if none could: the rule asks for the smallest domain that holds the gang.
 *
 * @param level     a level of {@code cluster.topology}; {@code null} only with {@code fromTrace} (then only jobs with a
 *                  placement in the trace are constrained)
 * @param fromTrace a job whose trace row names a placement ({@code trace.columns.placement}) keeps it, as it is
 *                  written (not widened); the rule applies to the others
 * @param waitAtMost a Required gang of the rule becomes Preferred once it has waited so long for the topology alone
 *                  (from the first cycle that starts with room for it but for its placement; each time it is queued),
 *                  as Slurm's {@code --switches=1@max-time}; {@code null}: Required for as long as it waits
 */
public record PlacementRule(String level, boolean required, int minInstances, boolean fromTrace, Duration waitAtMost) {
    public PlacementRule {
        if (level == null && !fromTrace) {
            throw new IllegalArgumentException("a placement rule names a level, or takes the trace's");
        }
        if (minInstances < 1) {
            throw new IllegalArgumentException("minInstances is below 1");
        }
        if (waitAtMost != null && (!required || waitAtMost.isNegative() || waitAtMost.isZero())) {
            throw new IllegalArgumentException("waitAtMost relaxes a Required placement after a positive wait");
        }
    }

    /** A rule that never relaxes. */
    public PlacementRule(String level, boolean required, int minInstances, boolean fromTrace) {
        this(level, required, minInstances, fromTrace, null);
    }

    /** In words, for reports: {@code rack Preferred, gangs of 2+ instances}. */
    public String describe() {
        String mode = required ? waitAtMost == null ? "Required" : "Required for " + Durations.format(waitAtMost) + " then Preferred" : "Preferred";
        String rule = level == null ? "" : level + " " + mode + ", gangs of " + minInstances + "+ instances";
        return fromTrace ? (rule.isEmpty() ? "from the trace" : "from the trace, else " + rule) : rule;
    }
}
