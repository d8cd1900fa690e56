package io.slipstream.executor.simulated;

import io.slipstream.api.run.Endpoint;
import io.slipstream.api.run.InstanceId;
import io.slipstream.api.run.RunId;
import io.slipstream.api.spec.Durations;
import io.slipstream.executor.Activity;
import io.slipstream.executor.EpochFence;
import io.slipstream.executor.Executor;
import io.slipstream.executor.ExecutorException;
import io.slipstream.executor.IdentityToken;
import io.slipstream.executor.InstanceReport;
import io.slipstream.executor.LaunchSpec;
import io.slipstream.executor.LogChunk;
import io.slipstream.executor.LogStream;
import io.slipstream.executor.NodeInfo;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.stream.Collectors;

/**
 * Instances that start no process: each "runs" on its node from its launch for the time its run's labels say
 * ({@link SimulatedLabels}), then ends with their exit code; told to stop, it acknowledges the notice after
 * {@link SimulatedExecutorSettings#stopAcknowledgedAfter} and exits 143, or is killed (137) when its grace period ends
 * first, at once without notice when there is none. Reports come from this executor's one timer thread, as a real
 * executor's come from its watchers.
 *
 * <p>Each instance is kept on disk under the server's data directory ({@link SimulatedInstances}) with the times that
 * decide its end, so that an executor made after a server restart adopts it and ends it when it would have ended: its
 * clock went on while no one watched. Replicas that share the data directory share the instances and fence each other
 * through it ({@link EpochFence}), as the local executor's do.
 */
final class SimulatedExecutor implements Executor {
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(SimulatedExecutor.class);
    private static final String TOKEN = "simulated";

    private final SimulatedExecutorSettings settings;
    private final Map<String, NodeInfo> nodes;
    private final SimulatedInstances instances;
    private final EpochFence fence;
    private final Clock clock;
    private final ScheduledThreadPoolExecutor timer;
    /** The end each running instance waits for, by id: replaced when a stop brings it forward. Changed under its run's lock. */
    private final Map<InstanceId, ScheduledFuture<?>> ends = new ConcurrentHashMap<>();
    /** Each instance's identity refreshes, this executor's: how many, and the last (in its log; a simulated instance reads no file). */
    private final Map<InstanceId, Refreshes> refreshes = new ConcurrentHashMap<>();
    /**
     * The locks of runs' instances, a run's always the same one: an instance's file and timer change under it, so that
     * launches, stops and ends of different runs go on side by side (one lock for all held the server's launches to
     * one file write at a time).
     */
    private final Object[] runLocks = new Object[64];

    private record Refreshes(int count, Instant last) {
    }
    private volatile Consumer<InstanceReport> listener = report -> {
    };
    private volatile boolean closed;
    private static final int FIRST_PORT = 1024;
    private static final int LAST_PORT = 65_535;

    SimulatedExecutor(SimulatedExecutorSettings settings, Path root, Clock clock) {
        this.settings = settings;
        this.nodes = settings.nodes().stream().collect(Collectors.toMap(NodeInfo::name, node -> node));
        this.instances = new SimulatedInstances(root);
        this.fence = new EpochFence(root);
        this.clock = clock;
        this.timer = new ScheduledThreadPoolExecutor(1, r -> {
            Thread thread = new Thread(r, "simulated-instances");
            thread.setDaemon(true);
            return thread;
        });
        this.timer.setRemoveOnCancelPolicy(true);
        Arrays.setAll(runLocks, i -> new Object());
    }

    @Override
    public List<NodeInfo> nodes() {
        return settings.nodes();
    }

    /**
     * The first ports from {@value #FIRST_PORT} up that are not taken (none is bound: nothing listens on a simulated
     * node). Each node is a host of its own ({@link #portDomain}): the ports taken are those of its own instances.
     */
    @Override
    public Endpoint endpoint(InstanceId id, String workspace, String name, String node, int ports, Set<Integer> taken) {
        List<Integer> given = new java.util.ArrayList<>();
        for (int port = FIRST_PORT; given.size() < ports; port++) {
            if (port > LAST_PORT) {
                throw new ExecutorException("no " + ports + " free ports for instance " + id + " in " + FIRST_PORT + "-" + LAST_PORT + ": "
                        + taken.size() + " are held by live instances");
            }
            if (!taken.contains(port)) {
                given.add(port);
            }
        }
        return new Endpoint(node, node + ".simulated", null, given);
    }

    /** Each simulated node stands for a host of its own. */
    @Override
    public String portDomain(String node) {
        return node;
    }

    @Override
    public Map<String, String> labelRefusals(Map<String, String> labels, Duration maxRuntime) {
        return SimulatedLabels.refusals(labels, maxRuntime);
    }

    @Override
    public void fence(long epoch) {
        fence.fence(epoch);
    }

    @Override
    public void setListener(Consumer<InstanceReport> listener) {
        this.listener = listener;
    }

    @Override
    public Map<String, String> launch(LaunchSpec spec) {
        if (!nodes.containsKey(spec.node())) {
            throw new ExecutorException("unknown node " + spec.node() + ": this simulated cluster has " + nodes.size() + " declared nodes");
        }
        SimulatedLabels told = SimulatedLabels.of(spec.labels(), settings.defaultDuration());
        if (told == null) {
            throw new ExecutorException("the run's labels are invalid: " + SimulatedLabels.refusals(spec.labels(), null));
        }
        return fence.guarded(() -> {
            synchronized (lockOf(spec.id().runId())) {
                SimulatedInstance known = instances.load(spec.id());
                if (known != null) {
                    // Launched before: the same instance, started once. If no timer of this executor ends it (a server
                    // that crashed after the launch, before it recorded it), it is adopted here.
                    if (!ends.containsKey(spec.id())) {
                        adoptOne(spec.id(), known);
                    }
                    return handle(known);
                }
                SimulatedInstance started = SimulatedInstance.started(UUID.randomUUID().toString(), spec.node(), clock.instant(), told.duration(), told.exitCode());
                instances.save(spec.id(), started);
                report(new InstanceReport.Running(spec.id(), handle(started), started.startedAt()));
                scheduleEnd(spec.id(), started);
                return handle(started);
            }
        });
    }

    private Object lockOf(RunId run) {
        return runLocks[Math.floorMod(run.hashCode(), runLocks.length)];
    }

    private static Map<String, String> handle(SimulatedInstance instance) {
        return Map.of(TOKEN, instance.token(), "node", instance.node());
    }

    /** Whether the handle is of this launch of the instance (not of one forgotten and launched again). */
    private static boolean sameLaunch(SimulatedInstance instance, Map<String, String> handle) {
        return instance != null && instance.token().equals(handle.get(TOKEN));
    }

    @Override
    public Optional<Map<String, String>> find(InstanceId id) {
        SimulatedInstance instance;
        synchronized (lockOf(id.runId())) {
            instance = instances.load(id);
        }
        return instance == null ? Optional.empty() : Optional.of(handle(instance));
    }

    @Override
    public void adopt(Map<InstanceId, Map<String, String>> handles) {
        fence.guarded(() -> {
            handles.forEach((id, handle) -> {
                synchronized (lockOf(id.runId())) {
                    SimulatedInstance instance;
                    try {
                        instance = instances.load(id);
                    } catch (ExecutorException e) {
                        report(new InstanceReport.Lost(id, e.getMessage(), clock.instant())); // one torn file loses one instance
                        return;
                    }
                    if (!sameLaunch(instance, handle)) {
                        report(new InstanceReport.Lost(id, "no such simulated instance in " + SimulatedExecutorSettings.NAME
                                + "/instances of the data directory (forgotten, or the directory was replaced)", clock.instant()));
                    } else {
                        adoptOne(id, instance);
                    }
                }
            });
        });
    }

    /**
     * Reports the instance as it is and, while it runs, ends it at its time: one whose end passed while no executor
     * watched it ended then, and is reported so. Call with the fence and its run's lock held.
     */
    private void adoptOne(InstanceId id, SimulatedInstance instance) {
        if (!instance.ended() && !instance.dueAt().isAfter(clock.instant())) {
            instance = instance.ended(instance.dueAt());
            instances.save(id, instance);
        }
        if (instance.ended()) {
            report(exited(id, instance));
        } else {
            report(new InstanceReport.Running(id, handle(instance), clock.instant()));
            scheduleEnd(id, instance);
        }
    }

    @Override
    public void terminate(InstanceId id, Map<String, String> handle, Duration gracePeriod, String reason) {
        fence.guarded(() -> {
            synchronized (lockOf(id.runId())) {
                SimulatedInstance instance = instances.load(id);
                if (!sameLaunch(instance, handle)) {
                    report(new InstanceReport.Lost(id, "no such simulated instance to stop", clock.instant()));
                    return;
                }
                if (instance.ended()) {
                    report(exited(id, instance)); // stopped already: said again, as the contract asks of a repeated stop
                    return;
                }
                SimulatedInstance stopping = instance.stopped(clock.instant(), gracePeriod, settings.stopAcknowledgedAfter(), reason);
                if (stopping != instance) {
                    instances.save(id, stopping);
                }
                scheduleEnd(id, stopping);
            }
        });
    }

    /** Ends the instance at its due time (now if that has passed), replacing the end it waited for. Call with the fence and its run's lock held. */
    private void scheduleEnd(InstanceId id, SimulatedInstance instance) {
        ScheduledFuture<?> before = ends.remove(id);
        if (before != null) {
            before.cancel(false);
        }
        if (closed) {
            return; // its timers die with it; a successor adopts the instance
        }
        Instant due = instance.dueAt();
        long delay = Math.max(0, Duration.between(clock.instant(), due).toMillis());
        try {
            ends.put(id, timer.schedule(() -> end(id, instance.token(), due), delay, TimeUnit.MILLISECONDS));
        } catch (java.util.concurrent.RejectedExecutionException e) {
            // closed meanwhile: its timers die with it; a successor adopts the instance
        }
    }

    private void end(InstanceId id, String token, Instant due) {
        InstanceReport report;
        try {
            // The fence first, then the run's lock, as every other path takes them.
            report = fence.guarded(() -> {
                synchronized (lockOf(id.runId())) {
                    ends.remove(id);
                    SimulatedInstance instance = instances.load(id);
                    if (instance == null || !instance.token().equals(token) || instance.ended() || instance.dueAt().isAfter(due)) {
                        return null; // forgotten, launched again, ended, or its end moved (a newer timer ends it)
                    }
                    SimulatedInstance ended = instance.ended(due);
                    instances.save(id, ended);
                    return exited(id, ended);
                }
            });
        } catch (EpochFence.Fenced e) {
            return; // a newer leader's executor ends it
        } catch (ExecutorException e) {
            // The fence's file or the instance's could not be read or written: tried again, not lost.
            LOG.warn("could not end simulated instance {} (trying again in 1 s): {}", id, e.getMessage());
            synchronized (lockOf(id.runId())) {
                if (!closed && !ends.containsKey(id)) {
                    try {
                        ends.put(id, timer.schedule(() -> end(id, token, due), 1, TimeUnit.SECONDS));
                    } catch (java.util.concurrent.RejectedExecutionException closing) {
                        // closed meanwhile: a successor adopts the instance
                    }
                }
            }
            return;
        }
        if (report != null) {
            listenerAccept(report);
        }
    }

    private static InstanceReport.Exited exited(InstanceId id, SimulatedInstance instance) {
        String reason = instance.terminated() ? instance.stopReason() : null;
        return new InstanceReport.Exited(id, instance.endCode(), instance.terminated(), reason, instance.endedAt());
    }

    /** A report from the timer thread (never from the caller's), unless this executor was closed. */
    private void report(InstanceReport report) {
        if (closed) {
            return;
        }
        try {
            timer.execute(() -> listenerAccept(report));
        } catch (java.util.concurrent.RejectedExecutionException e) {
            // closed meanwhile: a closed executor reports nothing
        }
    }

    private void listenerAccept(InstanceReport report) {
        if (!closed) {
            listener.accept(report);
        }
    }

    @Override
    public Activity activity(InstanceId id, Map<String, String> handle) {
        return Activity.NONE;
    }

    @Override
    public boolean deliversIdentity() {
        return true;
    }

    @Override
    public boolean refreshIdentity(InstanceId id, Map<String, String> handle, List<IdentityToken> tokens) {
        synchronized (lockOf(id.runId())) {
            SimulatedInstance instance = instances.load(id);
            if (!sameLaunch(instance, handle) || instance.ended()) {
                return false;
            }
            refreshes.merge(id, new Refreshes(1, clock.instant()), (was, now) -> new Refreshes(was.count() + 1, now.last()));
            return true;
        }
    }

    /** What it would have printed: when it started, what it was told, how it ended (stdout; stderr is empty). */
    @Override
    public LogChunk readLog(InstanceId id, Map<String, String> handle, LogStream stream, long offset, int maxBytes) {
        byte[] text = log(id, handle, stream);
        int from = (int) Math.min(Math.max(0, offset), text.length);
        int to = (int) Math.min(text.length, (long) from + maxBytes);
        return new LogChunk(Arrays.copyOfRange(text, from, to), to);
    }

    @Override
    public LogChunk readLogTail(InstanceId id, Map<String, String> handle, LogStream stream, int maxBytes) {
        byte[] text = log(id, handle, stream);
        int from = Math.max(0, text.length - maxBytes);
        return new LogChunk(Arrays.copyOfRange(text, from, text.length), text.length);
    }

    private byte[] log(InstanceId id, Map<String, String> handle, LogStream stream) {
        SimulatedInstance instance;
        synchronized (lockOf(id.runId())) {
            instance = instances.load(id);
        }
        if (stream != LogStream.STDOUT || !sameLaunch(instance, handle)) {
            return new byte[0];
        }
        StringBuilder log = new StringBuilder();
        log.append("simulated instance on ").append(instance.node()).append(": started ").append(instance.startedAt()).append(", runs ")
                .append(Durations.format(Duration.ofMillis(instance.runMillis()))).append(", then exits ").append(instance.exitCode()).append('\n');
        if (instance.stopAt() != null) {
            log.append("stop notice ").append(instance.stopAt()).append(" with a grace period of ")
                    .append(Durations.format(Duration.ofMillis(instance.graceMillis()))).append(": ").append(instance.stopReason()).append('\n');
        }
        Refreshes refreshed = refreshes.get(id);
        if (refreshed != null) {
            log.append("identity tokens refreshed ").append(refreshed.count()).append(" time(s), last ").append(refreshed.last()).append('\n');
        }
        if (instance.ended()) {
            log.append("exited ").append(instance.endCode()).append(' ').append(instance.endedAt()).append('\n');
        }
        return log.toString().getBytes(StandardCharsets.UTF_8);
    }

    @Override
    public void forget(RunId runId) {
        synchronized (lockOf(runId)) {
            ends.entrySet().removeIf(entry -> {
                if (entry.getKey().runId().equals(runId)) {
                    entry.getValue().cancel(false);
                    return true;
                }
                return false;
            });
            refreshes.keySet().removeIf(id -> id.runId().equals(runId));
            instances.forget(runId);
        }
    }

    /** Stops its timers and reports; the instances stay on disk, running on their clocks (a successor adopts them). */
    @Override
    public void close() {
        closed = true; // a timer set meanwhile is refused by the timer, shut down below
        ends.clear();
        timer.shutdownNow();
    }
}
