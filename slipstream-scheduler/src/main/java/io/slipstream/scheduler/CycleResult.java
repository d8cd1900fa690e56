package io.slipstream.scheduler;

import java.util.List;

/** The output of one cycle: promotions, then preemptions, shrinks and admissions, then grows, then why each other run waits. */
public record CycleResult(List<Decision> decisions) {
    public CycleResult {
        decisions = List.copyOf(decisions);
    }

    public List<Decision.Admit> admitted() {
        return of(Decision.Admit.class);
    }

    public List<Decision.Wait> waiting() {
        return of(Decision.Wait.class);
    }

    public List<Decision.Preempt> preempted() {
        return of(Decision.Preempt.class);
    }

    public List<Decision.Promote> promoted() {
        return of(Decision.Promote.class);
    }

    public List<Decision.Grow> grown() {
        return of(Decision.Grow.class);
    }

    public List<Decision.Shrink> shrunk() {
        return of(Decision.Shrink.class);
    }

    private <D extends Decision> List<D> of(Class<D> type) {
        return decisions.stream().filter(type::isInstance).map(type::cast).toList();
    }
}
