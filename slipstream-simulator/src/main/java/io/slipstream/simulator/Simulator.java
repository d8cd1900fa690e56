package io.slipstream.simulator;

import io.slipstream.api.problem.InvalidInputException;
import io.slipstream.simulator.engine.Simulation;
import io.slipstream.simulator.input.Experiment;
import io.slipstream.simulator.input.Policy;
import io.slipstream.simulator.report.PolicyResult;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/** Runs an experiment: the trace once per policy, one after the other, each from the same seed. */
public final class Simulator {
    private Simulator() {
    }

    /** @param only names of the policies to run ({@code empty}: all) */
    public static List<PolicyResult> run(Experiment experiment, Set<String> only, Simulation.Listener listener) {
        List<String> names = experiment.policies().stream().map(Policy::name).toList();
        for (String name : only) {
            if (!names.contains(name)) {
                throw new InvalidInputException("policy", "'" + name + "' is not a policy of " + experiment.name() + " (have: " + String.join(", ", names) + ")");
            }
        }
        List<PolicyResult> results = new ArrayList<>();
        for (Policy policy : experiment.policies()) {
            if (only.isEmpty() || only.contains(policy.name())) {
                results.add(new Simulation(experiment.trace(), experiment.cluster(), policy, experiment.seed(), listener).run());
            }
        }
        return results;
    }
}
