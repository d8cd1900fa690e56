package io.slipstream.scheduler;

import java.util.List;

/** The output of one cycle: one decision per pending run, in the order the runs were considered. */
public record CycleResult(List<Decision> decisions) {
    public CycleResult {
        decisions = List.copyOf(decisions);
    }

    public List<Decision.Admit> admitted() {
        return decisions.stream().filter(Decision.Admit.class::isInstance).map(Decision.Admit.class::cast).toList();
    }

    public List<Decision.Wait> waiting() {
        return decisions.stream().filter(Decision.Wait.class::isInstance).map(Decision.Wait.class::cast).toList();
    }
}
