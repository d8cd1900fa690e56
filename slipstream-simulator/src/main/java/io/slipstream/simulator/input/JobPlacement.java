package io.slipstream.simulator.input;

import static java.util.Objects.requireNonNull;

/**
 * Where a trace job asks its instances to be ({@code trace.columns.placement}: {@code rack}, {@code rack:Preferred},
 * {@code rack:Required}; a level alone is Required, as in a job's spec): in one domain of {@code level}.
 */
public record JobPlacement(String level, boolean required) {
    public JobPlacement {
        requireNonNull(level, "level is null");
    }
}
