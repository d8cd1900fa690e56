package io.slipstream.executor.testing;

import io.slipstream.api.run.EndCause;
import io.slipstream.api.run.Endpoint;
import io.slipstream.api.run.InstanceId;
import io.slipstream.api.run.InstanceUsage;
import io.slipstream.api.run.RunId;
import io.slipstream.api.spec.Resources;
import io.slipstream.executor.Activity;
import io.slipstream.executor.Executor;
import io.slipstream.executor.ExecutorException;
import io.slipstream.executor.IdentityToken;
import io.slipstream.executor.InstanceReport;
import io.slipstream.executor.LaunchSpec;
import io.slipstream.executor.LogChunk;
import io.slipstream.executor.LogStream;
import io.slipstream.executor.NodeInfo;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.Consumer;

/**
 * An executor that runs nothing: an instance is a record that lives from its launch until the test (or, when
 * {@link Mode#LIFELIKE}, a {@link #terminate}) ends it. What it "prints" and "reports as progress" is what the test
 * gives it ({@link #log}, {@link #print}, {@link #activity(InstanceId, Activity)}). Every call is recorded for assertions.
 *
 * <p>Instances live in a {@link Cluster}: executors made over the same cluster see the same instances, as a restarted
 * control plane's executor sees the processes the previous one started.
 *
 * <p>{@code FakeExecutorContractTest} holds the {@link Mode#LIFELIKE} fake to {@code BaseExecutorContractTest} (where
 * the suite needs a command really run, its {@code runsCommands()} hook says this executor runs none).
 */
public final class FakeExecutor implements Executor {
    /** Whether the fake answers on its own or waits for the test. */
    public enum Mode {
        /**
         * The test plays the instances: {@link #terminate} and {@link #adopt} are only recorded, and nothing is reported
         * unless the test says so ({@link #exit}, {@link #confirmTerminated}, {@link #report}). Lets a test stop time
         * between a request to stop and its confirmation.
         */
        STEERED,
        /**
         * Instances do as they are told at once, as the Executor contract describes: a launch reports {@code Running}, a
         * terminate ends the instance ({@code 143}; {@code 137} with no grace period) and reports {@code Exited(terminated)},
         * an adoption reports each instance as it is ({@code Running}, {@code Exited}, or {@code Lost} if unknown).
         * These reports come from the executor's own thread; the test's {@link #exit} still ends an instance.
         */
        LIFELIKE
    }

    private final Cluster cluster;
    private final Clock clock;
    private final Mode mode;
    private final List<InstanceId> terminated = new ArrayList<>();
    private final Map<InstanceId, String> terminations = new LinkedHashMap<>();
    private final List<Map<InstanceId, Map<String, String>>> adoptions = new ArrayList<>();
    private final List<RunId> forgotten = new ArrayList<>();
    private final ExecutorService reporter;
    private volatile boolean closed;
    /** The epoch this executor acts for (see {@link #fence}); 0 until fenced. */
    private volatile long epoch;
    /** Whether instances ignore the notice and are killed once their grace period is over (see {@link #ignoringNotices}). */
    private volatile boolean ignoringNotices;
    private volatile String problem;
    private volatile boolean restartsInPlace;
    /** When each instance told to stop is killed: this executor's memory, gone with it (as a server's timers are). */
    private final Map<InstanceId, java.util.Map.Entry<java.time.Instant, Map<String, String>>> killsDue = new LinkedHashMap<>();
    private volatile Consumer<InstanceReport> listener = r -> {
    };

    /** A {@link Mode#STEERED} fake over a cluster of its own: {@code nodeCount} nodes ({@code node-1}...) with {@code gpusPerNode} GPUs. */
    public FakeExecutor(Clock clock, int nodeCount, int gpusPerNode) {
        this(new Cluster(nodeCount, gpusPerNode), clock, Mode.STEERED);
    }

    /** A fake over {@code cluster}: one of several over the same instances, as after a restart of the control plane. */
    public FakeExecutor(Cluster cluster, Clock clock, Mode mode) {
        this.cluster = cluster;
        this.clock = clock;
        this.mode = mode;
        this.reporter = mode == Mode.LIFELIKE ? Executors.newSingleThreadExecutor(r -> {
            Thread thread = new Thread(r, "fake-executor-reports");
            thread.setDaemon(true);
            return thread;
        }) : null;
    }

    /**
     * The nodes and what runs on them, shared by the fakes made over it. Thread-safe.
     */
    public static final class Cluster {
        private final List<NodeInfo> nodes;
        private final Map<InstanceId, Instance> instances = new LinkedHashMap<>();
        private final Map<InstanceId, StringBuilder[]> logs = new ConcurrentHashMap<>();
        private final Map<InstanceId, Activity> activities = new ConcurrentHashMap<>();
        /** Each running instance's identity tokens as the last launch or refresh gave them, and how many refreshes it had. */
        private final Map<InstanceId, List<IdentityToken>> identity = new ConcurrentHashMap<>();
        private final Map<InstanceId, Integer> identityRefreshes = new ConcurrentHashMap<>();
        private final Set<String> refusingNodes = ConcurrentHashMap.newKeySet();
        private volatile boolean notReady;
        /** How many of the next launches and terminates fail as if the executor could not be reached. */
        private final java.util.concurrent.atomic.AtomicInteger failingLaunches = new java.util.concurrent.atomic.AtomicInteger();
        private final java.util.concurrent.atomic.AtomicInteger failingTerminates = new java.util.concurrent.atomic.AtomicInteger();
        private final java.util.concurrent.atomic.AtomicInteger notReadyLaunches = new java.util.concurrent.atomic.AtomicInteger();
        private int nextPort = 30000;
        /** The newest epoch an executor of this cluster was fenced at. */
        private long fencedAt;

        /** {@code nodeCount} nodes {@code node-1}, {@code node-2}... of 32 cpus, 256 GiB and {@code gpusPerNode} GPUs of model {@code sim-gpu}. */
        public Cluster(int nodeCount, int gpusPerNode) {
            List<NodeInfo> list = new ArrayList<>();
            for (int i = 1; i <= nodeCount; i++) {
                list.add(new NodeInfo("node-" + i, new Resources(32_000, 256L << 30, gpusPerNode, "sim-gpu"), null, Map.of()));
            }
            this.nodes = List.copyOf(list);
        }

        /** Whether the instance this handle names was launched and has not ended. */
        public synchronized boolean runs(Map<String, String> handle) {
            return instances.values().stream().anyMatch(i -> i.handle.equals(handle) && i.exitCode == null);
        }

        private synchronized Instance instance(InstanceId id) {
            return instances.get(id);
        }

        private StringBuilder log(InstanceId id, LogStream stream) {
            return logs.computeIfAbsent(id, k -> new StringBuilder[] {new StringBuilder(), new StringBuilder()})[stream.ordinal()];
        }
    }

    /** An instance as the fake keeps it: its spec, its handle, and its exit once it ended. */
    private static final class Instance {
        final LaunchSpec spec;
        final Map<String, String> handle;
        Integer exitCode;
        boolean terminated;
        EndCause cause;
        InstanceUsage usage;

        Instance(LaunchSpec spec) {
            this.spec = spec;
            this.handle = spec.restart() == 0 ? handleOf(spec.id())
                    : Map.of("fake", spec.id().toString(), Executor.RESTART_KEY, Integer.toString(spec.restart()));
        }
    }

    private static Map<String, String> handleOf(InstanceId id) {
        return Map.of("fake", id.toString());
    }

    /** The cluster this fake runs instances on. */
    public Cluster cluster() {
        return cluster;
    }

    // --- steering ---

    public void refuseLaunchesOn(String node) {
        cluster.refusingNodes.add(node);
    }

    /** The next {@code count} launches throw {@link ExecutorException} before doing anything (the executor is unreachable). */
    public void failNextLaunches(int count) {
        cluster.failingLaunches.set(count);
    }

    /** The next {@code count} terminates throw {@link ExecutorException} before doing anything (the executor is unreachable). */
    public void failNextTerminates(int count) {
        cluster.failingTerminates.set(count);
    }

    private static void failIfAsked(java.util.concurrent.atomic.AtomicInteger failing, String what) {
        if (failing.getAndUpdate(left -> Math.max(0, left - 1)) > 0) {
            throw new ExecutorException("the executor could not be reached to " + what + " (a test's fault)");
        }
    }

    /** Until {@link #ready}, every launch throws {@link io.slipstream.executor.LaunchNotReadyException} (an image being pulled). */
    public void notReady() {
        cluster.notReady = true;
    }

    public void ready() {
        cluster.notReady = false;
    }

    /** How many launches were told the instance cannot start yet. */
    public int notReadyLaunches() {
        return cluster.notReadyLaunches.get();
    }

    /** The instance's process "exits" with this code (reported now, on the caller's thread). */
    public void exit(InstanceId id, int code) {
        exit(id, code, null);
    }

    /** The instance's process ends with this code for {@code cause} (e.g. an OOM kill: 137, {@code OOMKilled}). */
    public void exit(InstanceId id, int code, EndCause cause) {
        exit(id, code, cause, null);
    }

    /** The instance's process ends with this code and cause, with what the kernel counted for it (as the local executor measures). */
    public void exit(InstanceId id, int code, EndCause cause, InstanceUsage usage) {
        end(id, code, false, cause, usage);
        listener.accept(new InstanceReport.Exited(id, code, false, cause, null, usage, clock.instant()));
    }

    /** Confirms that a terminated instance is gone (reported now, on the caller's thread). */
    public void confirmTerminated(InstanceId id, int code) {
        end(id, code, true, null);
        listener.accept(new InstanceReport.Exited(id, code, true, clock.instant()));
    }

    /**
     * Waits until every report this fake made so far ({@link Mode#LIFELIKE}: on its own thread) has been delivered to
     * its listener: a seeded test then sees the same reports at the same point of its sequence every time.
     */
    public void awaitReports() {
        if (reporter == null || closed) {
            return;
        }
        try {
            reporter.submit(() -> {
            }).get();
        } catch (java.util.concurrent.RejectedExecutionException e) {
            // closed meanwhile: nothing more is delivered
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for the fake's reports", e);
        } catch (java.util.concurrent.ExecutionException e) {
            throw new IllegalStateException(e.getCause());
        }
    }

    /** Reports anything, now, on the caller's thread (the fake's instances do not change). */
    public void report(InstanceReport report) {
        listener.accept(report);
    }

    /** What the instance "printed" on stderr. */
    public void log(InstanceId id, String text) {
        print(id, LogStream.STDERR, text);
    }

    /** What the instance "printed" on {@code stream}. */
    public void print(InstanceId id, LogStream stream, String text) {
        StringBuilder log = cluster.log(id, stream);
        synchronized (log) {
            log.append(text);
        }
    }

    /** What the instance last showed of its life. */
    public void activity(InstanceId id, Activity activity) {
        cluster.activities.put(id, activity);
    }

    /** Pretends that an instance was launched earlier (by a previous server that crashed before recording it). */
    public void pretendLaunched(LaunchSpec spec) {
        synchronized (cluster) {
            cluster.instances.put(spec.id(), new Instance(spec));
        }
    }

    private void end(InstanceId id, int code, boolean byTerminate, EndCause cause) {
        end(id, code, byTerminate, cause, null);
    }

    private void end(InstanceId id, int code, boolean byTerminate, EndCause cause, InstanceUsage usage) {
        synchronized (cluster) {
            Instance instance = cluster.instances.get(id);
            if (instance != null && instance.exitCode == null) {
                instance.exitCode = code;
                instance.terminated = byTerminate;
                instance.cause = cause;
                instance.usage = usage;
            }
        }
    }

    // --- what was asked ---

    /** What was launched (and not forgotten), by instance. */
    public Map<InstanceId, LaunchSpec> launched() {
        synchronized (cluster) {
            Map<InstanceId, LaunchSpec> specs = new LinkedHashMap<>();
            cluster.instances.forEach((id, instance) -> specs.put(id, instance.spec));
            return Map.copyOf(specs);
        }
    }

    /** What was launched and has not ended (its process would still be running), by instance. */
    public Map<InstanceId, LaunchSpec> live() {
        synchronized (cluster) {
            Map<InstanceId, LaunchSpec> specs = new LinkedHashMap<>();
            cluster.instances.forEach((id, instance) -> {
                if (instance.exitCode == null) {
                    specs.put(id, instance.spec);
                }
            });
            return specs;
        }
    }

    /** The instance's identity tokens as its launch or its last refresh gave them (empty: none, or it never ran). */
    public List<IdentityToken> identity(InstanceId id) {
        return cluster.identity.getOrDefault(id, List.of());
    }

    /** How often the instance's identity tokens were refreshed. */
    public int identityRefreshes(InstanceId id) {
        return cluster.identityRefreshes.getOrDefault(id, 0);
    }

    public synchronized List<InstanceId> terminated() {
        return List.copyOf(terminated);
    }

    /** Why, and with which grace period, each instance was told to stop. */
    public synchronized Map<InstanceId, String> terminations() {
        return Map.copyOf(terminations);
    }

    public synchronized List<Map<InstanceId, Map<String, String>>> adoptions() {
        return List.copyOf(adoptions);
    }

    public synchronized List<RunId> forgotten() {
        return List.copyOf(forgotten);
    }

    // --- the Executor ---

    @Override
    public List<NodeInfo> nodes() {
        return cluster.nodes;
    }

    /** Every instance on 10.0.0.<node number>, ports counted up from 30000. */
    @Override
    public Endpoint endpoint(InstanceId id, String workspace, String name, String node, int ports, Set<Integer> taken) {
        List<Integer> given = new ArrayList<>();
        synchronized (cluster) {
            while (given.size() < ports) {
                int port = cluster.nextPort++;
                if (!taken.contains(port)) {
                    given.add(port);
                }
            }
        }
        String ip = "10.0.0." + node.substring(node.lastIndexOf('-') + 1);
        return new Endpoint(node, node + ".cluster.local", ip, given);
    }

    @Override
    public void setListener(Consumer<InstanceReport> listener) {
        this.listener = listener;
    }

    @Override
    public void fence(long epoch) {
        synchronized (cluster) {
            if (cluster.fencedAt > epoch) {
                throw new io.slipstream.executor.EpochSupersededException(epoch, cluster.fencedAt, "the fake cluster");
            }
            cluster.fencedAt = epoch;
            this.epoch = epoch;
        }
    }

    /** Refuses a side effect of an executor whose epoch was superseded; call with the cluster's lock held. */
    private void requireCurrentEpoch() {
        if (cluster.fencedAt > epoch) {
            throw new ExecutorException("fenced: this executor acts for epoch " + epoch + ", superseded by " + cluster.fencedAt);
        }
    }

    @Override
    public Map<String, String> launch(LaunchSpec spec) {
        if (cluster.nodes.stream().noneMatch(n -> n.name().equals(spec.node()))) {
            throw new ExecutorException("unknown node " + spec.node());
        }
        if (cluster.refusingNodes.contains(spec.node())) {
            throw new ExecutorException("node " + spec.node() + " refuses launches");
        }
        failIfAsked(cluster.failingLaunches, "launch " + spec.id());
        if (cluster.notReady) {
            cluster.notReadyLaunches.incrementAndGet();
            throw new io.slipstream.executor.LaunchNotReadyException("the image is being pulled");
        }
        Instance instance;
        boolean fresh;
        synchronized (cluster) {
            requireCurrentEpoch();
            Instance before = cluster.instances.get(spec.id());
            // A restart in place: the ended launch's id launched again, newer than it, is a new process.
            fresh = before == null || before.exitCode != null && spec.restart() > Executor.restartOf(before.handle);
            if (fresh) {
                cluster.instances.put(spec.id(), new Instance(spec));
            }
            instance = cluster.instances.get(spec.id());
            if (fresh || instance.exitCode == null) {
                cluster.identity.put(spec.id(), spec.identity()); // adopted: the new tokens replace the old, as a refresh would
            }
        }
        if (fresh) {
            later(new InstanceReport.Running(spec.id(), instance.handle, clock.instant()));
        }
        return instance.handle;
    }

    @Override
    public Optional<Map<String, String>> find(InstanceId id) {
        Instance instance = cluster.instance(id);
        return instance == null ? Optional.empty() : Optional.of(instance.handle);
    }

    @Override
    public void adopt(Map<InstanceId, Map<String, String>> handles) {
        synchronized (cluster) {
            requireCurrentEpoch();
        }
        synchronized (this) {
            adoptions.add(Map.copyOf(handles));
        }
        handles.forEach((id, handle) -> later(now(id, handle)));
    }

    /** What an instance is now, as a report. */
    private InstanceReport now(InstanceId id, Map<String, String> handle) {
        synchronized (cluster) {
            Instance instance = cluster.instances.get(id);
            if (instance == null || !instance.handle.equals(handle)) {
                return new InstanceReport.Lost(id, "no such instance on this cluster", clock.instant());
            }
            if (instance.exitCode == null) {
                return new InstanceReport.Running(id, instance.handle, clock.instant());
            }
            return new InstanceReport.Exited(id, instance.exitCode, instance.terminated, instance.cause, null, instance.usage, clock.instant());
        }
    }

    @Override
    public void terminate(InstanceId id, Map<String, String> handle, Duration gracePeriod, String reason) {
        failIfAsked(cluster.failingTerminates, "stop " + id);
        synchronized (cluster) {
            requireCurrentEpoch();
        }
        synchronized (this) {
            terminated.add(id);
            terminations.put(id, reason + " / " + gracePeriod);
        }
        if (mode == Mode.LIFELIKE) {
            if (ignoringNotices && !gracePeriod.isZero()) {
                synchronized (this) {
                    killsDue.put(id, Map.entry(clock.instant().plus(gracePeriod), handle));
                }
                return;
            }
            // It stops on the notice; with no grace period it is killed without one.
            end(id, gracePeriod.isZero() ? 137 : 143, true, null);
            later(now(id, handle));
        }
    }

    /** What {@link #problem} says from now on ({@code null}: nothing), as an executor whose backend stopped answering. */
    /** From now on it says it restarts instances in place ({@link Executor#restartsInPlace}): it always does. */
    public FakeExecutor restartingInPlace() {
        this.restartsInPlace = true;
        return this;
    }

    @Override
    public boolean restartsInPlace() {
        return restartsInPlace;
    }

    public void setProblem(String problem) {
        this.problem = problem;
    }

    @Override
    public String problem() {
        return problem;
    }

    /**
     * From now on ({@link Mode#LIFELIKE}), an instance told to stop with a grace period ignores the notice: this executor
     * kills it when {@link #killDue} finds its grace period over. The kills due are this executor's memory only: an
     * executor closed before (a control plane that crashed) never kills them, as a real server's timers die with it.
     */
    public FakeExecutor ignoringNotices() {
        this.ignoringNotices = true;
        return this;
    }

    /** Kills (137, reported) every instance whose grace period is over by the clock (see {@link #ignoringNotices}). */
    public void killDue() {
        List<java.util.Map.Entry<InstanceId, Map<String, String>>> due = new ArrayList<>();
        synchronized (this) {
            java.time.Instant now = clock.instant();
            killsDue.entrySet().removeIf(kill -> {
                if (kill.getValue().getKey().isAfter(now)) {
                    return false;
                }
                due.add(Map.entry(kill.getKey(), kill.getValue().getValue()));
                return true;
            });
        }
        for (var kill : due) {
            end(kill.getKey(), 137, true, null);
            later(now(kill.getKey(), kill.getValue()));
        }
    }

    @Override
    public boolean deliversIdentity() {
        return true;
    }

    @Override
    public boolean refreshIdentity(InstanceId id, Map<String, String> handle, List<IdentityToken> tokens) {
        synchronized (cluster) {
            Instance instance = cluster.instances.get(id);
            if (instance == null || instance.exitCode != null || !instance.handle.equals(handle)) {
                return false;
            }
            cluster.identity.put(id, List.copyOf(tokens));
            cluster.identityRefreshes.merge(id, 1, Integer::sum);
            return true;
        }
    }

    @Override
    public Activity activity(InstanceId id, Map<String, String> handle) {
        return cluster.activities.getOrDefault(id, Activity.NONE);
    }

    @Override
    public LogChunk readLog(InstanceId id, Map<String, String> handle, LogStream stream, long offset, int maxBytes) {
        byte[] text = text(id, stream);
        int from = (int) Math.min(Math.max(0, offset), text.length);
        int to = (int) Math.min(text.length, (long) from + maxBytes);
        return new LogChunk(Arrays.copyOfRange(text, from, to), to);
    }

    @Override
    public LogChunk readLogTail(InstanceId id, Map<String, String> handle, LogStream stream, int maxBytes) {
        byte[] text = text(id, stream);
        int from = Math.max(0, text.length - maxBytes);
        return new LogChunk(Arrays.copyOfRange(text, from, text.length), text.length);
    }

    private byte[] text(InstanceId id, LogStream stream) {
        StringBuilder[] logs = cluster.logs.get(id);
        if (logs == null) {
            return new byte[0];
        }
        StringBuilder log = logs[stream.ordinal()];
        synchronized (log) {
            return log.toString().getBytes(StandardCharsets.UTF_8);
        }
    }

    @Override
    public void forget(RunId runId) {
        synchronized (cluster) {
            cluster.instances.keySet().removeIf(id -> id.runId().equals(runId));
        }
        cluster.logs.keySet().removeIf(id -> id.runId().equals(runId));
        cluster.activities.keySet().removeIf(id -> id.runId().equals(runId));
        synchronized (this) {
            forgotten.add(runId);
        }
    }

    /** Stops reporting; the cluster's instances stay as they are (a fake over the same cluster adopts them). */
    @Override
    public void close() {
        closed = true;
        synchronized (this) {
            killsDue.clear(); // its timers die with it
        }
        if (reporter != null) {
            reporter.shutdown();
        }
    }

    /** A report from the executor's own thread, in {@link Mode#LIFELIKE} only, unless the fake was closed. */
    private void later(InstanceReport report) {
        if (mode != Mode.LIFELIKE || closed) {
            return;
        }
        try {
            reporter.execute(() -> {
                if (!closed) {
                    listener.accept(report);
                }
            });
        } catch (java.util.concurrent.RejectedExecutionException e) {
            // closed meanwhile: a closed executor reports nothing
        }
    }
}
