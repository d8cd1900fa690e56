package io.slipstream.executor.slurm;

import io.slipstream.api.run.EndCause;
import io.slipstream.api.run.InstanceId;
import io.slipstream.api.run.RunId;
import io.slipstream.executor.EpochFence;
import io.slipstream.executor.Executor;
import io.slipstream.executor.ExecutorException;
import io.slipstream.executor.InstanceReport;
import io.slipstream.executor.local.files.InstanceDirectory;
import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The launches being followed, each until its job ended. Every {@code slurm.pollInterval} one {@code squeue} reads the
 * state of every job of the partition; for each launch that says whether it waits, runs or ended, and its directory says
 * the rest: whether its startup probe passed ({@code ready}) or failed, whether it acknowledged a stop notice, and how its
 * command ended ({@code exit_code}, which its wrapper wrote). An end is reported once the job left Slurm's running states
 * (no process of it is left: COMPLETING is not over), after its secrets are removed. Reports come from this watch's
 * threads.
 *
 * <p>A stop signals every process of the job ({@code scancel --signal=TERM --full}) after the notice, and kills them
 * ({@code --signal=KILL}) when the grace period ends or the instance acknowledged the notice; the commands run on
 * threads of their own, under the epoch fence. Every {@code scancel} names the job's id after {@code --}, and is held to
 * the launch's job name and the partition ({@link #cancelArguments}): an id the workload wrote cancels no other job.
 */
final class JobWatch implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(JobWatch.class);

    /** What scancel says of a job Slurm no longer has (it ended, and MinJobAge passed, or it never started). */
    private static final String GONE = "Invalid job id specified";
    private final Map<InstanceId, WatchedJob> watched = new ConcurrentHashMap<>();
    private final SlurmCommands commands;
    private final SlurmSettings settings;
    /** squeue's arguments that read every job of the partition that may be an instance's ({@link SlurmExecutor#queueArguments}). */
    private final List<String> queue;
    private final EpochFence fence;
    private final Clock clock;
    /** Reads the queue and reports; its own thread, so that a slow squeue holds up no kill that is due. */
    private final ScheduledExecutorService poller;
    /** Kills when grace periods end, and reports of instances that cannot be followed. */
    private final ScheduledExecutorService timer;
    private final ExecutorService signals;
    private volatile Consumer<InstanceReport> listener = report -> {
    };
    private volatile boolean closed;
    /** How soon after a stop's signal the queue is read again ({@link #pollSoon}). */
    private static final Duration SOON = Duration.ofMillis(150);
    /** Whether such a reading is queued and not begun. */
    private final java.util.concurrent.atomic.AtomicBoolean soonQueued = new java.util.concurrent.atomic.AtomicBoolean();
    /** Why the last poll failed, since when ({@code null}: it did not); said once in the log, until one succeeds again. */
    private volatile String failing;

    JobWatch(SlurmCommands commands, SlurmSettings settings, List<String> queue, EpochFence fence, Clock clock, ScheduledExecutorService timer,
             ExecutorService signals) {
        this.commands = commands;
        this.queue = queue;
        this.settings = settings;
        this.fence = fence;
        this.clock = clock;
        this.timer = timer;
        this.signals = signals;
        this.poller = java.util.concurrent.Executors.newSingleThreadScheduledExecutor(runnable -> {
            Thread thread = new Thread(runnable, "slurm-executor-poll");
            thread.setDaemon(true);
            return thread;
        });
        long every = settings.pollInterval().toMillis();
        poller.scheduleWithFixedDelay(this::poll, every, every, TimeUnit.MILLISECONDS);
    }

    /** Why Slurm's queue cannot be read, since when; {@code null} when the last poll read it. */
    String problem() {
        return failing;
    }

    void setListener(Consumer<InstanceReport> listener) {
        this.listener = listener;
    }

    /**
     * Follows the launch until its job ends; one already followed is left as it is. {@code adopted}: it is reported
     * running once its job is seen alive, and ready again if its probe passed.
     */
    WatchedJob watch(InstanceId id, Map<String, String> handle, InstanceDirectory dir, boolean adopted) {
        if (!SlurmHandles.isJobId(handle.get(SlurmHandles.JOB))) {
            throw new ExecutorException("instance " + id + ": its handle names no Slurm job id");
        }
        String name = JobName.of(settings.jobNamePrefix(), id, Executor.restartOf(handle)).toString();
        WatchedJob job = watched.compute(id, (key, known) -> known != null && known.job.equals(handle.get(SlurmHandles.JOB))
                ? known : new WatchedJob(id, handle, dir, name));
        if (adopted) {
            job.reportRunning = true;
            job.readyReported = false;
            job.probeFailedReported = false;
        }
        return job;
    }

    boolean isWatched(InstanceId id) {
        return watched.containsKey(id);
    }

    boolean watchesAnyOf(RunId run) {
        return watched.keySet().stream().anyMatch(id -> id.runId().equals(run));
    }

    /** The launch followed for this instance, or {@code null}. */
    WatchedJob get(InstanceId id) {
        return watched.get(id);
    }

    /** The directories of the launches followed now. */
    List<InstanceDirectory> directories() {
        return watched.values().stream().map(job -> job.dir).toList();
    }

    /** Reports, from this watch's thread, that an instance that cannot be followed is lost. */
    void lose(InstanceId id, String reason) {
        LOG.warn("instance {} is lost: {}", id, reason);
        runOnTimer(() -> report(new InstanceReport.Lost(id, reason, clock.instant())));
    }

    /**
     * Stops the launch: the polite signal now (unless {@code gracePeriod} is zero), the kill when it ends. A second stop
     * can only bring the kill forward.
     */
    void stop(WatchedJob job, Duration gracePeriod) {
        Instant deadline = clock.instant().plus(gracePeriod);
        boolean signal;
        synchronized (job) {
            if (job.killAt == null || deadline.isBefore(job.killAt)) {
                job.killAt = deadline;
            }
            signal = !gracePeriod.isZero() && !job.signalled;
            job.signalled |= signal;
        }
        if (gracePeriod.isZero()) {
            kill(job);
        } else if (signal) {
            command(job, "signal", () -> {
                try {
                    commands.run("scancel", cancelArguments(settings, job, "--signal=TERM", "--full"));
                } catch (ExecutorException e) {
                    commands.run("scancel", cancelArguments(settings, job)); // not running yet (pending): nothing of it to tell, it just goes
                }
                pollSoon();
            });
            runOnTimerLater(() -> killIfDue(job), gracePeriod);
        }
    }

    private void killIfDue(WatchedJob job) {
        if (watched.get(job.id) != job) {
            return; // it ended before its grace period did: nothing is left to kill
        }
        Instant killAt = job.killAt;
        if (killAt != null && !clock.instant().isBefore(killAt)) {
            kill(job);
        }
    }

    /**
     * Kills every process of the job, once: SIGKILL to its batch script (the wrapper), after which Slurm kills whatever of
     * the job is left as it ends it ({@code proctrack}); a job that is not running yet leaves the queue. Not
     * {@code --full}, nor a plain cancel: for SIGKILL those make Slurm cancel the job, which sends SIGTERM first and kills
     * only after KillWait, and a kill must not be a polite signal.
     */
    private void kill(WatchedJob job) {
        synchronized (job) {
            if (job.killed) {
                return;
            }
            job.killed = true;
        }
        command(job, "kill", () -> {
            try {
                commands.run("scancel", cancelArguments(settings, job, "--signal=KILL", "--batch"));
            } catch (ExecutorException e) {
                commands.run("scancel", cancelArguments(settings, job)); // not running (pending), or gone already
            }
            pollSoon();
        }, () -> job.killed = false); // Slurm did not answer: the next poll kills it again
    }

    /**
     * The arguments of an {@code scancel} of the launch's job: {@code options}, then filters that Slurm applies to the id
     * too (a job of another name or partition is left alone), then {@code --} and the id.
     */
    static List<String> cancelArguments(SlurmSettings settings, WatchedJob job, String... options) {
        List<String> arguments = new java.util.ArrayList<>(List.of(options));
        arguments.add("--name=" + job.name);
        arguments.add("--partition=" + settings.partition());
        arguments.add("--");
        arguments.add(job.job);
        return arguments;
    }

    private void command(WatchedJob job, String what, Runnable effect) {
        command(job, what, effect, () -> {
        });
    }

    /**
     * Runs a Slurm command of a stop on a thread of its own, unless a newer leader fenced this executor; {@code failed}
     * runs when Slurm did not do it.
     */
    private void command(WatchedJob job, String what, Runnable effect, Runnable failed) {
        try {
            signals.execute(() -> {
                try {
                    fence.guarded(effect);
                } catch (EpochFence.Fenced e) {
                    LOG.info("not stopping instance {} ({}): {}", job.id, what, e.getMessage());
                } catch (RuntimeException e) {
                    if (String.valueOf(e.getMessage()).contains(GONE)) {
                        // It ended on its own (an acknowledged notice, a quick exit) before the signal: nothing left to stop.
                        LOG.debug("instance {}: Slurm job {} was gone before its {}", job.id, job.job, what);
                        return;
                    }
                    LOG.warn("cannot {} instance {} (Slurm job {}): {}", what, job.id, job.job, e.getMessage());
                    failed.run();
                }
            });
        } catch (java.util.concurrent.RejectedExecutionException e) {
            // closed: a restarted server stops it again
        }
    }

    /**
     * Reads the queue again shortly, besides the regular polls: a stopped job usually ends within tens of milliseconds of
     * its signal, and its end would otherwise wait for the next poll (up to {@code slurm.pollInterval}, 2 s by default).
     * Stops that come together share one such reading.
     */
    private void pollSoon() {
        if (soonQueued.compareAndSet(false, true)) {
            try {
                poller.schedule(() -> {
                    soonQueued.set(false);
                    poll();
                }, SOON.toMillis(), TimeUnit.MILLISECONDS);
            } catch (java.util.concurrent.RejectedExecutionException e) {
                soonQueued.set(false); // closed
            }
        }
    }

    /** One round: every followed launch against one reading of Slurm's queue. */
    void poll() {
        if (closed || watched.isEmpty()) {
            return;
        }
        long readAt = System.nanoTime();
        Map<String, JobState> states;
        try {
            states = JobState.read(commands, queue);
        } catch (RuntimeException e) {
            if (closed) {
                return; // interrupted by close()
            }
            if (failing == null) {
                LOG.warn("cannot read Slurm's queue (instances are followed again once it answers): {}", e.getMessage());
                failing = "cannot read Slurm's queue since " + clock.instant() + " (instances are followed again once it answers): " + e.getMessage();
            }
            return;
        }
        if (failing != null) {
            LOG.info("Slurm's queue answers again");
            failing = null;
        }
        Instant now = clock.instant();
        for (WatchedJob job : watched.values()) {
            if (job.since - readAt > 0) {
                continue; // launched after the queue was read: the reading cannot know it yet
            }
            try {
                follow(job, states.get(job.job), now);
            } catch (RuntimeException e) {
                LOG.warn("cannot follow instance {} (Slurm job {}): {}", job.id, job.job, e.toString());
            }
        }
    }

    private void follow(WatchedJob job, JobState state, Instant now) {
        if (state != null && !state.named(job.name)) {
            LOG.warn("instance {}: Slurm job {} is not its own (named {}, not {}); it is taken as gone", job.id, job.job,
                    SlurmHandles.printable(state.name()), job.name);
            state = null;
        }
        if (state == null || !state.live()) {
            end(job, state);
            return;
        }
        if (job.reportRunning) {
            job.reportRunning = false;
            report(new InstanceReport.Running(job.id, job.handle, now));
        }
        if (state.waiting()) {
            waiting(job, state, now);
        } else {
            job.waitingSince = null;
        }
        if (!job.readyReported && InstanceScript.ready(job.dir.path())) {
            job.readyReported = true;
            report(new InstanceReport.Ready(job.id, now));
        } else if (!job.readyReported && !job.probeFailedReported) {
            String failed = InstanceScript.probeFailure(job.dir.path());
            if (failed != null) {
                job.probeFailedReported = true;
                report(new InstanceReport.ProbeFailed(job.id, failed, now));
            }
        }
        Instant killAt = job.killAt;
        if (killAt != null && !job.killed && (!now.isBefore(killAt) || job.dir.acknowledged())) {
            kill(job); // its grace period is over, or it saved its work and asks to be released
        }
    }

    /** A job Slurm keeps waiting longer than {@code slurm.startTimeout} is cancelled: its instance is lost, saying why. */
    private void waiting(WatchedJob job, JobState state, Instant now) {
        if (job.waitingSince == null) {
            job.waitingSince = now;
        }
        Duration waited = Duration.between(job.waitingSince, now);
        if (job.lostReason == null && job.killAt == null && waited.compareTo(settings.startTimeout()) >= 0) {
            job.lostReason = "Slurm kept its job " + job.job + " waiting to start on node " + job.handle.get(SlurmHandles.NODE) + " for "
                    + waited.toSeconds() + " s (" + state + "; slurm.startTimeout)";
            LOG.warn("instance {}: {}; cancelling it", job.id, job.lostReason);
            kill(job);
        } else if (job.lostReason != null && !job.killed) {
            kill(job); // the cancel failed (Slurm did not answer): again, at each poll until it goes
        }
    }

    /** The job ended (or Slurm forgot it): its secrets go, then its end is reported. */
    private void end(WatchedJob job, JobState state) {
        if (!watched.remove(job.id, job)) {
            return;
        }
        try {
            job.dir.removeSecrets();
        } catch (IOException | RuntimeException e) {
            LOG.warn("cannot remove the secret files of instance {}: {}", job.id, e.toString());
        }
        report(endOf(job, state, clock.instant()));
    }

    /**
     * How the launch ended: lost with its node where Slurm ended the job for its node's failure (its command may have
     * recorded the SIGTERM that came with it: that is not how it ended), else its command's exit code where its wrapper
     * recorded one, else what Slurm says of the job.
     */
    static InstanceReport endOf(WatchedJob job, JobState state, Instant now) {
        if (job.lostReason != null) {
            return new InstanceReport.Lost(job.id, job.lostReason, now);
        }
        if (state != null && state.nodeFailed()) {
            return new InstanceReport.Lost(job.id, "node " + job.handle.get(SlurmHandles.NODE) + " failed: Slurm ended job " + job.job + " " + state,
                    true, now);
        }
        Integer exitCode = InstanceScript.exitCode(job.dir.path());
        boolean terminated = job.dir.terminationRequested();
        if (exitCode != null) {
            EndCause cause = state != null && state.outOfMemory() && exitCode != 0 ? EndCause.OOMKilled : null;
            return new InstanceReport.Exited(job.id, exitCode, terminated, cause, null, null, now);
        }
        if (terminated) {
            return new InstanceReport.Exited(job.id, 137, true, now); // killed with everything of it: its wrapper too
        }
        if (state != null && state.outOfMemory()) {
            return new InstanceReport.Exited(job.id, 137, false, EndCause.OOMKilled, "Slurm ended job " + job.job + " " + state, null, now);
        }
        return new InstanceReport.Lost(job.id, state == null
                ? "its Slurm job " + job.job + " ended without recording an exit code, and Slurm no longer remembers it (MinJobAge)"
                : "its Slurm job " + job.job + " ended " + state + " without recording an exit code (cancelled or ended outside Slipstream?)", now);
    }

    private void report(InstanceReport report) {
        if (closed) {
            return;
        }
        try {
            listener.accept(report);
        } catch (RuntimeException e) {
            LOG.error("listener failed on {}", report, e);
        }
    }

    private void runOnTimer(Runnable task) {
        try {
            timer.execute(task);
        } catch (java.util.concurrent.RejectedExecutionException e) {
            // closed: reports nothing more
        }
    }

    private void runOnTimerLater(Runnable task, Duration delay) {
        try {
            timer.schedule(task, delay.toMillis(), TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.RejectedExecutionException e) {
            // closed
        }
    }

    @Override
    public void close() {
        closed = true;
        poller.shutdownNow();
    }
}
