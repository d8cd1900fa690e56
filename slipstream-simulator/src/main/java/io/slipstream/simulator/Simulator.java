package io.slipstream.simulator;

import io.slipstream.api.problem.InvalidInputException;
import io.slipstream.simulator.engine.Simulation;
import io.slipstream.simulator.input.Experiment;
import io.slipstream.simulator.input.Policy;
import io.slipstream.simulator.report.PolicyResult;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * Runs an experiment: the trace once per policy, each from the same seed, policies in parallel on the available
 * cores. Each replay is deterministic and shares nothing mutable with the others, so the results do not depend on
 * the number of threads; they come back in the experiment's policy order.
 */
public final class Simulator {
    private Simulator() {
    }

    /** @param only names of the policies to run ({@code empty}: all) */
    public static List<PolicyResult> run(Experiment experiment, Set<String> only, Simulation.Listener listener) {
        return run(experiment, only, listener, Runtime.getRuntime().availableProcessors());
    }

    /** @param threads the most replays at once */
    public static List<PolicyResult> run(Experiment experiment, Set<String> only, Simulation.Listener listener, int threads) {
        List<String> names = experiment.policies().stream().map(Policy::name).toList();
        for (String name : only) {
            if (!names.contains(name)) {
                throw new InvalidInputException("policy", "'" + name + "' is not a policy of " + experiment.name() + " (have: " + String.join(", ", names) + ")");
            }
        }
        List<Policy> chosen = experiment.policies().stream().filter(p -> only.isEmpty() || only.contains(p.name())).toList();
        if (chosen.size() <= 1 || threads <= 1) {
            return chosen.stream().map(policy -> replay(experiment, policy, listener)).toList();
        }
        ExecutorService pool = Executors.newFixedThreadPool(Math.min(threads, chosen.size()), runnable -> {
            Thread thread = new Thread(runnable, "simulate");
            thread.setDaemon(true); // an interrupted command does not wait for replays nobody will read
            return thread;
        });
        try {
            List<Future<PolicyResult>> futures = new ArrayList<>();
            chosen.forEach(policy -> futures.add(pool.submit(() -> replay(experiment, policy, listener))));
            List<PolicyResult> results = new ArrayList<>();
            for (Future<PolicyResult> future : futures) {
                results.add(join(future));
            }
            return results;
        } finally {
            pool.shutdownNow();
        }
    }

    private static PolicyResult replay(Experiment experiment, Policy policy, Simulation.Listener listener) {
        return new Simulation(experiment.trace(), experiment.cluster(), policy, experiment.seed(), listener).run();
    }

    private static PolicyResult join(Future<PolicyResult> future) {
        try {
            return future.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while replaying", e);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof RuntimeException runtime) {
                throw runtime;
            }
            throw new IllegalStateException(e.getCause());
        }
    }
}
