package io.slipstream.server.control;

import io.slipstream.api.run.RunId;
import io.slipstream.model.lifecycle.Observation;
import io.slipstream.store.ConflictException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.Consumer;
import org.slf4j.MDC;

/**
 * Just-admitted runs launch what may start at once (not a cycle later), each with the same steps as every other run,
 * side by side: a launch mostly waits for processes to start, and one run's launch must not wait for another's.
 */
final class AdmittedLaunches implements AutoCloseable {
    private final RunStepper stepper;
    private final ExecutorService threads;

    AdmittedLaunches(RunStepper stepper, int parallel) {
        this.stepper = stepper;
        this.threads = Executors.newFixedThreadPool(parallel, runnable -> {
            Thread thread = new Thread(runnable, "slipstream-launch");
            thread.setDaemon(true);
            return thread;
        });
    }

    /**
     * Takes each admitted run through its steps, all at once, and waits for every one of them before it returns or
     * fails. Returns whether launches were left for the next cycle; a run that changed meanwhile goes to
     * {@code conflicted}.
     */
    boolean launch(List<Admissions.Admitted> admitted, Observation seen, Consumer<RunId> conflicted) {
        if (admitted.isEmpty()) {
            return false;
        }
        List<Future<Boolean>> launches = new ArrayList<>();
        for (Admissions.Admitted one : admitted) {
            launches.add(threads.submit(() -> {
                try (var ignored = MDC.putCloseable("run", one.run().id().value())) {
                    RunSteps steps = stepper.of(one.run(), one.instances());
                    steps.take(stepper.lifecycle(), seen);
                    return steps.deferred();
                }
            }));
        }
        boolean deferred = false;
        RuntimeException failed = null;
        for (int i = 0; i < launches.size(); i++) {
            try {
                deferred |= Futures.await(launches.get(i));
            } catch (ConflictException e) {
                conflicted.accept(admitted.get(i).run().id());
            } catch (RuntimeException e) {
                failed = failed == null ? e : failed; // every launch is waited for before the cycle fails
            }
        }
        if (failed != null) {
            throw failed;
        }
        return deferred;
    }

    /** A launch under way ends by itself (its cycle waits for it). */
    @Override
    public void close() {
        threads.shutdown();
    }
}
