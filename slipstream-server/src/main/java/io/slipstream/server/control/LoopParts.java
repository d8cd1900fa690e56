package io.slipstream.server.control;

import static java.util.Objects.requireNonNull;

import io.slipstream.executor.Executor;
import io.slipstream.scheduler.Scheduler;
import io.slipstream.server.auth.RunTokens;
import io.slipstream.server.config.RunLimits;
import io.slipstream.store.Store;
import java.time.Clock;
import java.time.Duration;
import java.util.function.Consumer;

/**
 * What a {@link ControlLoop} is made of: the store it writes (fenced, where replicas take turns), the executor it
 * acts through, the pure scheduler, the clock, and what outlives one loop (progress reported through the API, queue
 * reasons), which a replica's next loop takes over. {@link #of} gives the defaults; the {@code with*} methods the rest.
 *
 * @param runTokens    gives each run's instances their run's token, or {@code null} for none
 * @param secrets      the values of the Secrets node groups refer to, read at launch, or {@code null} for none
 * @param identity     signs the identity tokens runs ask for, or {@code null} (a run that asks for some cannot start)
 * @param cycleTimes   told how long each completed cycle took (the metrics' cycle histogram)
 * @param parallelLaunches how many admitted runs launch at once (each waits mostly for its processes to start, not
 *                     for a core); 1 makes a cycle's store calls come in one order, as a seeded test needs
 */
public record LoopParts(Store store, Executor executor, Scheduler scheduler, Clock clock, RunLimits limits, Duration tick,
                        RunTokens runTokens, LaunchSecrets secrets, RunIdentity identity, ProgressReports progressReports, QueueStatus queueStatus,
                        Consumer<Duration> cycleTimes, int parallelLaunches) {
    /** How many admitted runs launch at once by default. */
    public static final int PARALLEL_LAUNCHES = 8;

    public LoopParts {
        requireNonNull(store, "store is null");
        requireNonNull(executor, "executor is null");
        requireNonNull(scheduler, "scheduler is null");
        requireNonNull(clock, "clock is null");
        requireNonNull(limits, "limits is null");
        requireNonNull(tick, "tick is null");
        requireNonNull(progressReports, "progressReports is null");
        requireNonNull(queueStatus, "queueStatus is null");
        requireNonNull(cycleTimes, "cycleTimes is null");
        if (parallelLaunches < 1) {
            throw new IllegalArgumentException("parallelLaunches must be at least 1, not " + parallelLaunches);
        }
    }

    /** A loop with the default limits, a tick of a second, no run tokens, no secrets and its own progress and queue. */
    public static LoopParts of(Store store, Executor executor, Clock clock) {
        return new LoopParts(store, executor, new Scheduler(), clock, RunLimits.DEFAULTS, Duration.ofSeconds(1), null, null, null,
                new ProgressReports(), new QueueStatus(), took -> {
                }, PARALLEL_LAUNCHES);
    }

    public LoopParts withLimits(RunLimits limits) {
        return new LoopParts(store, executor, scheduler, clock, limits, tick, runTokens, secrets, identity, progressReports, queueStatus, cycleTimes, parallelLaunches);
    }

    /** The scheduling core: its defaults but for the server's fair-sharing setting. */
    public LoopParts withScheduler(Scheduler scheduler) {
        return new LoopParts(store, executor, scheduler, clock, limits, tick, runTokens, secrets, identity, progressReports, queueStatus, cycleTimes, parallelLaunches);
    }

    public LoopParts withTick(Duration tick) {
        return new LoopParts(store, executor, scheduler, clock, limits, tick, runTokens, secrets, identity, progressReports, queueStatus, cycleTimes, parallelLaunches);
    }

    public LoopParts withRunTokens(RunTokens runTokens) {
        return new LoopParts(store, executor, scheduler, clock, limits, tick, runTokens, secrets, identity, progressReports, queueStatus, cycleTimes, parallelLaunches);
    }

    public LoopParts withSecrets(LaunchSecrets secrets) {
        return new LoopParts(store, executor, scheduler, clock, limits, tick, runTokens, secrets, identity, progressReports, queueStatus, cycleTimes, parallelLaunches);
    }

    public LoopParts withIdentity(RunIdentity identity) {
        return new LoopParts(store, executor, scheduler, clock, limits, tick, runTokens, secrets, identity, progressReports, queueStatus, cycleTimes, parallelLaunches);
    }

    /** What outlives one loop: a replica's loop runs only while it leads, and the next one takes these over. */
    public LoopParts withShared(ProgressReports progressReports, QueueStatus queueStatus) {
        return new LoopParts(store, executor, scheduler, clock, limits, tick, runTokens, secrets, identity, progressReports, queueStatus, cycleTimes, parallelLaunches);
    }

    public LoopParts withCycleTimes(Consumer<Duration> cycleTimes) {
        return new LoopParts(store, executor, scheduler, clock, limits, tick, runTokens, secrets, identity, progressReports, queueStatus, cycleTimes, parallelLaunches);
    }

    public LoopParts withParallelLaunches(int parallelLaunches) {
        return new LoopParts(store, executor, scheduler, clock, limits, tick, runTokens, secrets, identity, progressReports, queueStatus, cycleTimes, parallelLaunches);
    }
}
