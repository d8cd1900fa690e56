package io.slipstream.executor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.slipstream.api.run.InstanceId;
import io.slipstream.api.run.RunId;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * What every {@link Executor} must do. An implementation's test extends this; {@link #newExecutor()} may be
 * called more than once to simulate a restart of the control plane (the new executor must see the instances
 * the old one launched).
 */
public abstract class BaseExecutorContractTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(30);
    private static final AtomicInteger RUNS = new AtomicInteger();

    private final List<Executor> executors = new ArrayList<>();
    private final List<Running> launched = new ArrayList<>();
    private final LinkedBlockingQueue<InstanceReport> reports = new LinkedBlockingQueue<>();
    /**
     * The newest epoch a test fenced an executor at (0: none); executors made later act at it. Static: an
     * implementation's state (a cluster) may outlive one test.
     */
    private static final java.util.concurrent.atomic.AtomicLong NEWEST_EPOCH = new java.util.concurrent.atomic.AtomicLong();

    /** A new executor over the same (persistent) state as the ones made before in this test. */
    protected abstract Executor createExecutor();

    /** A node of the executor's on which the tests may launch instances (with at least 2 GPUs). */
    protected abstract String nodeName();

    /** Asserts that nothing of the instance runs any more (implementation-specific evidence). */
    protected abstract void assertNothingRuns(Map<String, String> handle);

    /**
     * Whether stdout and stderr are kept apart. Kubernetes keeps one log per container: both streams read as
     * {@link LogStream#STDOUT} there, and {@link LogStream#STDERR} is empty.
     */
    protected boolean separatesStdoutAndStderr() {
        return true;
    }

    /**
     * Whether an instance sees the GPUs the control plane chose for it ({@link LaunchSpec#gpus}). Where the cluster's
     * resource manager allocates the devices itself (Slurm's GRES), the instance sees as many, of its choosing.
     */
    protected boolean exposesTheChosenGpus() {
        return true;
    }

    /**
     * Whether the executor sees an instance acknowledge a preemption notice (a file it touches) and releases it early.
     * On Kubernetes an instance is released by exiting once it saved its work.
     */
    protected boolean seesNoticeAcknowledgement() {
        return true;
    }

    /** The key of a handle that tells instances apart (a process id, a pod's uid). */
    protected String identityKey() {
        return "pid";
    }

    /** Whether the executor reads the progress file an instance writes (Kubernetes: only its output is visible). */
    protected boolean readsProgressFile() {
        return true;
    }

    /**
     * Whether an instance runs its command. A fake executor runs none: its instances live from their launch until they
     * are stopped, print nothing and never end by themselves. The tests of what a command does (exit codes, output,
     * environment, signals, files, probes, secrets) are skipped for it; the rest of the life cycle still holds it: one
     * launch per instance, find, adopt after a restart, terminate (143 after a notice, 137 without a grace period),
     * forget, endpoints, unknown nodes.
     */
    protected boolean runsCommands() {
        return true;
    }

    private void assumeRunsCommands() {
        org.junit.jupiter.api.Assumptions.assumeTrue(runsCommands(), "the executor runs no commands");
    }

    private record Running(Executor executor, InstanceId id, Map<String, String> handle) {
    }

    /** Fences {@code executor} at the next epoch (that executors made later act at, too) and returns it. */
    protected final long fenceAtTheNextEpoch(Executor executor) {
        long epoch = NEWEST_EPOCH.incrementAndGet();
        executor.fence(epoch);
        return epoch;
    }

    protected final Executor newExecutor() {
        Executor executor = createExecutor();
        executor.setListener(reports::add);
        executors.add(executor);
        if (NEWEST_EPOCH.get() > 0) {
            executor.fence(NEWEST_EPOCH.get());
        }
        return executor;
    }

    /** Stops whatever a test left running, through a fresh executor, and waits until it is gone. */
    @AfterEach
    void stopEverything() throws InterruptedException {
        Executor cleaner = createExecutor();
        if (NEWEST_EPOCH.get() > 0) {
            cleaner.fence(NEWEST_EPOCH.get());
        }
        LinkedBlockingQueue<InstanceReport> ended = new LinkedBlockingQueue<>();
        cleaner.setListener(report -> {
            if (!(report instanceof InstanceReport.Running)) {
                ended.add(report);
            }
        });
        executors.forEach(Executor::close);
        // The newest launch of each instance: an older one (before a restart in place) has ended, and stopping it
        // would report that end, and so end this wait, before the newest is killed.
        Map<InstanceId, Map<String, String>> newest = new java.util.LinkedHashMap<>();
        launched.forEach(running -> newest.put(running.id(), running.handle()));
        newest.forEach((id, handle) -> cleaner.terminate(id, handle, Duration.ZERO, "test"));
        java.util.Set<InstanceId> waiting = new java.util.HashSet<>();
        launched.forEach(r -> waiting.add(r.id()));
        long deadline = System.nanoTime() + TIMEOUT.toNanos();
        while (!waiting.isEmpty() && System.nanoTime() < deadline) {
            InstanceReport report = ended.poll(100, TimeUnit.MILLISECONDS);
            if (report != null) {
                waiting.remove(report.id());
            }
        }
        cleaner.close();
    }

    /** Fences {@code executor} at an epoch newer than every one before, as a replica that takes over does. */
    protected static void fenceAtNewestEpoch(Executor executor) {
        long epoch = NEWEST_EPOCH.incrementAndGet();
        executor.fence(epoch);
    }

    protected static InstanceId newInstanceId() {
        return new InstanceId(new RunId("contract-" + RUNS.incrementAndGet()), 1, 0);
    }

    /** The container image instances run in, where the executor runs containers ({@code null}: none). */
    protected String image() {
        return null;
    }

    protected final LaunchSpec spec(InstanceId id, String node, String script) {
        return spec(id, node, script, Map.of(), List.of());
    }

    protected final LaunchSpec spec(InstanceId id, String node, String script, Map<String, String> env, List<Integer> gpus) {
        return new LaunchSpec(id, "main-0", node, gpus, List.of("sh", "-c", script), env, null, image());
    }

    /** Launches, again while the executor says the instance cannot start yet (its image is being pulled), as the control loop does. */
    protected final Map<String, String> launch(Executor executor, LaunchSpec spec) {
        Map<String, String> handle = launchWhenReady(executor, spec);
        launched.add(new Running(executor, spec.id(), handle));
        return handle;
    }

    /** {@code executor.launch(spec)}, again, with a deadline, while it throws {@link LaunchNotReadyException}. */
    public static Map<String, String> launchWhenReady(Executor executor, LaunchSpec spec) {
        long deadline = System.nanoTime() + TIMEOUT.toNanos();
        while (true) {
            try {
                return executor.launch(spec);
            } catch (LaunchNotReadyException e) {
                assertThat(System.nanoTime()).as("ready to launch within the deadline: " + e.getMessage()).isLessThan(deadline);
                try {
                    TimeUnit.MILLISECONDS.sleep(20);
                } catch (InterruptedException interrupted) {
                    Thread.currentThread().interrupt();
                    throw new AssertionError(interrupted);
                }
            }
        }
    }

    /** Waits, with a deadline, for the next report about {@code id} of the given type. */
    protected final <R extends InstanceReport> R awaitReport(InstanceId id, Class<R> type) throws InterruptedException {
        long deadline = System.nanoTime() + TIMEOUT.toNanos();
        List<InstanceReport> others = new ArrayList<>();
        try {
            while (System.nanoTime() < deadline) {
                InstanceReport report = reports.poll(100, TimeUnit.MILLISECONDS);
                if (report == null) {
                    continue;
                }
                if (report.id().equals(id) && type.isInstance(report)) {
                    return type.cast(report);
                }
                if (report.id().equals(id) && !(report instanceof InstanceReport.Running)) {
                    throw new AssertionError("expected " + type.getSimpleName() + " for " + id + " but got " + report);
                }
                others.add(report);
            }
        } finally {
            reports.addAll(others);
        }
        throw new AssertionError("no " + type.getSimpleName() + " report for " + id + " within " + TIMEOUT);
    }

    protected final String readAll(Executor executor, InstanceId id, Map<String, String> handle, LogStream stream) {
        StringBuilder text = new StringBuilder();
        long offset = 0;
        while (true) {
            LogChunk chunk = executor.readLog(id, handle, stream, offset, 7);
            if (chunk.data().length == 0) {
                return text.toString();
            }
            text.append(new String(chunk.data(), StandardCharsets.UTF_8));
            offset = chunk.nextOffset();
        }
    }

    @Test
    void reportsTheExitCodeOfTheMainProcess() throws Exception {
        assumeRunsCommands();
        Executor executor = newExecutor();
        InstanceId ok = newInstanceId();
        InstanceId failing = newInstanceId();
        launch(executor, spec(ok, nodeName(), "exit 0"));
        launch(executor, spec(failing, nodeName(), "exit 3"));
        assertThat(awaitReport(ok, InstanceReport.Exited.class).exitCode()).isZero();
        InstanceReport.Exited exited = awaitReport(failing, InstanceReport.Exited.class);
        assertThat(exited.exitCode()).isEqualTo(3);
        assertThat(exited.terminated()).isFalse();
    }

    @Test
    void passesTheEnvironmentAndKeepsStdoutAndStderrApart() throws Exception {
        assumeRunsCommands();
        Executor executor = newExecutor();
        InstanceId id = newInstanceId();
        Map<String, String> handle = launch(executor, spec(id, nodeName(),
                "echo \"greeting=$GREETING\"; echo oops >&2; sleep 1; echo \"gpus=$CUDA_VISIBLE_DEVICES\"",
                Map.of("GREETING", "hello world; $(rm -rf /)"), List.of(1)));
        awaitReport(id, InstanceReport.Exited.class);
        if (separatesStdoutAndStderr() && exposesTheChosenGpus()) {
            assertThat(readAll(executor, id, handle, LogStream.STDOUT)).isEqualTo("greeting=hello world; $(rm -rf /)\ngpus=1\n");
            assertThat(readAll(executor, id, handle, LogStream.STDERR)).isEqualTo("oops\n");
        } else if (separatesStdoutAndStderr()) {
            // As many GPUs as were asked for (one), of the resource manager's choosing.
            assertThat(readAll(executor, id, handle, LogStream.STDOUT)).matches("greeting=hello world; \\$\\(rm -rf /\\)\ngpus=[^,\\s]+\n");
            assertThat(readAll(executor, id, handle, LogStream.STDERR)).isEqualTo("oops\n");
        } else {
            // One stream, in order; which GPU ids the instance sees is the device plugin's choice.
            assertThat(readAll(executor, id, handle, LogStream.STDOUT)).startsWith("greeting=hello world; $(rm -rf /)\noops\ngpus=");
            assertThat(readAll(executor, id, handle, LogStream.STDERR)).isEmpty();
        }
        LogChunk tail = executor.readLog(id, handle, LogStream.STDOUT, 9, 1024);
        assertThat(new String(tail.data(), StandardCharsets.UTF_8)).startsWith("hello world");
    }

    @Test
    void argumentsAreNeverInterpretedByAShell() throws Exception {
        assumeRunsCommands();
        Executor executor = newExecutor();
        InstanceId id = newInstanceId();
        LaunchSpec spec = new LaunchSpec(id, "main-0", nodeName(), List.of(),
                List.of("printf", "%s|", "a b", "$(echo injected)", "; exit 9", "*"), Map.of(), null, image());
        Map<String, String> handle = launch(executor, spec);
        assertThat(awaitReport(id, InstanceReport.Exited.class).exitCode()).isZero();
        assertThat(readAll(executor, id, handle, LogStream.STDOUT)).isEqualTo("a b|$(echo injected)|; exit 9|*|");
    }

    /**
     * Whether a command the instance's image does not have fails the launch itself, naming it (the local executor
     * looks it up in an image before it starts anything); otherwise the instance exits with 126 or 127.
     */
    protected boolean refusesMissingCommandsAtLaunch() {
        return false;
    }

    @Test
    void aCommandThatCannotBeFoundFailsWithAnExitCode() throws Exception {
        assumeRunsCommands();
        Executor executor = newExecutor();
        InstanceId id = newInstanceId();
        LaunchSpec spec = new LaunchSpec(id, "main-0", nodeName(), List.of(), List.of("no-such-program-xyz"), Map.of(), null, image());
        if (refusesMissingCommandsAtLaunch()) {
            assertThatThrownBy(() -> launchWhenReady(executor, spec)).isInstanceOf(ExecutorException.class)
                    .hasMessageContaining("no-such-program-xyz");
            return;
        }
        Map<String, String> handle = launch(executor, spec);
        assertThat(awaitReport(id, InstanceReport.Exited.class).exitCode()).isIn(126, 127);
        assertThat(readAll(executor, id, handle, separatesStdoutAndStderr() ? LogStream.STDERR : LogStream.STDOUT)).contains("no-such-program-xyz");
    }

    @Test
    void terminateStopsTheWholeProcessTree() throws Exception {
        Executor executor = newExecutor();
        InstanceId id = newInstanceId();
        Map<String, String> handle = launch(executor, spec(id, nodeName(), "sleep 600 & sleep 600 & echo started; wait"));
        awaitStarted(executor, id, handle, "started");
        executor.terminate(id, handle, Duration.ofSeconds(10), "test");
        InstanceReport.Exited exited = awaitReport(id, InstanceReport.Exited.class);
        assertThat(exited.terminated()).isTrue();
        assertThat(exited.exitCode()).isEqualTo(143);
        assertNothingRuns(handle);
    }

    @Test
    void terminateKillsWhatIgnoresTheSignalAfterTheGracePeriod() throws Exception {
        assumeRunsCommands();
        Executor executor = newExecutor();
        InstanceId id = newInstanceId();
        Map<String, String> handle = launch(executor, spec(id, nodeName(), "trap '' TERM; echo started; while true; do sleep 1; done"));
        awaitOutput(executor, id, handle, "started");
        long start = System.nanoTime();
        executor.terminate(id, handle, Duration.ofMillis(500), "test");
        InstanceReport.Exited exited = awaitReport(id, InstanceReport.Exited.class);
        assertThat(exited.exitCode()).isEqualTo(137);
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(Duration.ofMillis(500));
        assertNothingRuns(handle);
    }

    @Test
    void anInstanceThatAcknowledgesTheNoticeIsReleasedBeforeTheGracePeriodEnds() throws Exception {
        assumeRunsCommands();
        org.junit.jupiter.api.Assumptions.assumeTrue(seesNoticeAcknowledgement(), "the executor releases instances when they exit");
        Executor executor = newExecutor();
        InstanceId id = newInstanceId();
        // Saves "a checkpoint" on SIGTERM, acknowledges, then would linger for the whole grace period.
        Map<String, String> handle = launch(executor, spec(id, nodeName(), "trap 'cat \"$SLIPSTREAM_PREEMPTION_NOTICE_FILE\"; "
                + "touch \"$SLIPSTREAM_PREEMPTION_ACK_FILE\"' TERM; echo started; while true; do sleep 1; done"));
        awaitOutput(executor, id, handle, "started");
        long start = System.nanoTime();
        executor.terminate(id, handle, Duration.ofSeconds(60), "ReclaimedByQuotaOwner: test");
        InstanceReport.Exited exited = awaitReport(id, InstanceReport.Exited.class);
        assertThat(exited.terminated()).isTrue();
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(30));
        assertThat(readAll(executor, id, handle, LogStream.STDOUT)).contains("ReclaimedByQuotaOwner: test").contains("deadline");
        assertNothingRuns(handle);
    }

    @Test
    void noGracePeriodKillsAtOnceWithoutNotice() throws Exception {
        Executor executor = newExecutor();
        InstanceId id = newInstanceId();
        Map<String, String> handle = launch(executor, spec(id, nodeName(), "trap 'echo got-term; exit 0' TERM; echo started; "
                + "while true; do sleep 1 & wait $!; done"));
        awaitStarted(executor, id, handle, "started");
        executor.terminate(id, handle, Duration.ZERO, "NodeLost: test");
        InstanceReport.Exited exited = awaitReport(id, InstanceReport.Exited.class);
        assertThat(exited.exitCode()).isEqualTo(137);
        assertThat(exited.terminated()).isTrue();
        assertThat(readAll(executor, id, handle, LogStream.STDOUT)).doesNotContain("got-term");
        assertNothingRuns(handle);
    }

    @Test
    void activityShowsTheLastOutputAndTheReportedProgress() throws Exception {
        assumeRunsCommands();
        Executor executor = newExecutor();
        if (!readsProgressFile()) {
            InstanceId id = newInstanceId();
            Map<String, String> handle = launch(executor, spec(id, nodeName(), "echo started; exec sleep 600"));
            awaitOutput(executor, id, handle, "started");
            assertThat(executor.activity(id, handle).lastOutputAt()).isNotNull();
            return;
        }
        InstanceId id = newInstanceId();
        Map<String, String> handle = launch(executor, spec(id, nodeName(), "printf '{\"step\": 42, \"checkpointStep\": 40, "
                + "\"checkpointTime\": \"2026-11-29T10:00:00Z\", \"metrics\": {\"loss\": 0.25, \"bad\": \"x\"}}' > \"$SLIPSTREAM_PROGRESS_FILE\"; "
                + "echo started; exec sleep 600"));
        awaitOutput(executor, id, handle, "started");
        Activity activity = executor.activity(id, handle);
        assertThat(activity.lastOutputAt()).isNotNull();
        assertThat(activity.progress()).isNotNull();
        assertThat(activity.progress().step()).isEqualTo(42);
        assertThat(activity.progress().checkpointStep()).isEqualTo(40);
        assertThat(activity.progress().checkpointAt()).isEqualTo(java.time.Instant.parse("2026-11-29T10:00:00Z"));
        assertThat(activity.progress().metrics()).containsExactly(Map.entry("loss", 0.25));
        executor.terminate(id, handle, Duration.ofSeconds(5), "test");
        awaitReport(id, InstanceReport.Exited.class);
        assertThat(executor.activity(id, handle).progress().step()).as("still readable after the end").isEqualTo(42);
    }

    @Test
    void theEndOfALogCanBeReadWithoutReadingItAll() throws Exception {
        assumeRunsCommands();
        Executor executor = newExecutor();
        InstanceId id = newInstanceId();
        Map<String, String> handle = launch(executor, spec(id, nodeName(), "seq 1 100000 >&2; echo NCCL error >&2; exit 1"));
        awaitReport(id, InstanceReport.Exited.class);
        LogStream stream = separatesStdoutAndStderr() ? LogStream.STDERR : LogStream.STDOUT;
        String tail = new String(executor.readLogTail(id, handle, stream, 100).data(), java.nio.charset.StandardCharsets.UTF_8);
        assertThat(tail).hasSizeLessThanOrEqualTo(100).endsWith("100000\nNCCL error\n");
    }

    @Test
    void leftoverChildrenOfAFinishedInstanceAreKilled() throws Exception {
        assumeRunsCommands();
        Executor executor = newExecutor();
        InstanceId id = newInstanceId();
        Map<String, String> handle = launch(executor, spec(id, nodeName(), "sleep 600 & exit 0"));
        assertThat(awaitReport(id, InstanceReport.Exited.class).exitCode()).isZero();
        assertNothingRuns(handle);
    }

    /**
     * Two replicas' executors over the same instances: once the successor is fenced at a newer epoch, the old one
     * (a leader that lost its lease and woke up) launches, stops and adopts nothing, and cannot fence again.
     */
    @Test
    void anExecutorOfAnOlderEpochStartsAndStopsNothing() throws Exception {
        long epoch = NEWEST_EPOCH.get() + 1;
        Executor old = newExecutor();
        old.fence(epoch);
        NEWEST_EPOCH.set(epoch);
        InstanceId running = newInstanceId();
        Map<String, String> handle = launch(old, spec(running, nodeName(), "echo up; sleep 600"));
        awaitStarted(old, running, handle, "up");

        Executor successor = newExecutor();
        successor.fence(epoch + 1);
        NEWEST_EPOCH.set(epoch + 1);
        InstanceId late = newInstanceId();
        assertThatThrownBy(() -> old.launch(spec(late, nodeName(), "echo never"))).isInstanceOf(ExecutorException.class).hasMessageContaining("fenced");
        assertThat(successor.find(late)).as("nothing of it was started").isEmpty();
        assertThatThrownBy(() -> old.terminate(running, handle, Duration.ZERO, "stale")).isInstanceOf(ExecutorException.class).hasMessageContaining("fenced");
        assertThatThrownBy(() -> old.adopt(Map.of(running, handle))).isInstanceOf(ExecutorException.class);
        assertThatThrownBy(() -> old.fence(epoch)).isInstanceOfSatisfying(EpochSupersededException.class,
                e -> assertThat(e.newest()).as("how far it must go").isEqualTo(epoch + 1));
        assertThatThrownBy(() -> newExecutor().fence(epoch)).as("no executor goes back to an older epoch").isInstanceOf(EpochSupersededException.class);
        assertThat(successor.find(running)).as("the stale stop did not happen").isPresent();

        successor.terminate(running, handle, Duration.ofSeconds(5), "test");
        assertThat(awaitReport(running, InstanceReport.Exited.class).terminated()).isTrue();
        assertNothingRuns(handle);
    }

    @Test
    void launchingTheSameInstanceTwiceStartsItOnce() throws Exception {
        Executor executor = newExecutor();
        InstanceId id = newInstanceId();
        LaunchSpec spec = spec(id, nodeName(), "echo once; sleep 600");
        Map<String, String> first = launch(executor, spec);
        Map<String, String> second = executor.launch(spec);
        assertThat(second.get(identityKey())).as("the same instance").isNotNull().isEqualTo(first.get(identityKey()));
        awaitStarted(executor, id, first, "once");
        executor.terminate(id, first, Duration.ofSeconds(5), "test");
        awaitReport(id, InstanceReport.Exited.class);
        if (runsCommands()) {
            assertThat(readAll(executor, id, first, LogStream.STDOUT)).isEqualTo("once\n");
        }
    }

    @Test
    void aRestartedExecutorAdoptsRunningInstancesAndCanStopThem() throws Exception {
        Executor before = newExecutor();
        InstanceId id = newInstanceId();
        Map<String, String> handle = launch(before, spec(id, nodeName(), "echo up; sleep 600"));
        awaitStarted(before, id, handle, "up");
        before.close(); // the control plane "crashes": instances keep running

        Executor after = newExecutor();
        after.adopt(Map.of(id, handle));
        awaitReport(id, InstanceReport.Running.class);
        after.terminate(id, handle, Duration.ofSeconds(5), "test");
        assertThat(awaitReport(id, InstanceReport.Exited.class).terminated()).isTrue();
        assertNothingRuns(handle);
    }

    @Test
    void aRestartedExecutorReportsTheExitCodeOfAnInstanceThatEndedWhileItWasDown() throws Exception {
        assumeRunsCommands();
        Executor before = newExecutor();
        InstanceId id = newInstanceId();
        Map<String, String> handle = launch(before, spec(id, nodeName(), "read line < \"$GATE\"; exit 7",
                Map.of("GATE", gate(id)), List.of()));
        before.close();
        openGate(id); // the instance ends while no executor watches it

        Executor after = newExecutor();
        after.adopt(Map.of(id, handle));
        assertThat(awaitReport(id, InstanceReport.Exited.class).exitCode()).isEqualTo(7);
    }

    @Test
    void findsOnlyInstancesThatWereLaunched() throws Exception {
        Executor executor = newExecutor();
        InstanceId id = newInstanceId();
        assertThat(executor.find(id)).isEmpty();
        Map<String, String> handle = launch(executor, spec(id, nodeName(), "exit 0"));
        if (runsCommands()) {
            awaitReport(id, InstanceReport.Exited.class); // found after its end too
        }
        assertThat(handle.get(identityKey())).isNotNull();
        assertThat(newExecutor().find(id)).hasValueSatisfying(found -> assertThat(found.get(identityKey())).isEqualTo(handle.get(identityKey())));
    }

    @Test
    void forgettingAFinishedRunRemovesItsInstancesAndLogs() throws Exception {
        Executor executor = newExecutor();
        InstanceId id = newInstanceId();
        InstanceId other = newInstanceId();
        Map<String, String> handle = launch(executor, spec(id, nodeName(), "echo bye"));
        Map<String, String> otherHandle = launch(executor, spec(other, nodeName(), "echo stays"));
        if (!runsCommands()) { // its instances end only when stopped
            executor.terminate(id, handle, Duration.ZERO, "test");
            executor.terminate(other, otherHandle, Duration.ZERO, "test");
        }
        awaitReport(id, InstanceReport.Exited.class);
        awaitReport(other, InstanceReport.Exited.class);
        if (runsCommands()) {
            assertThat(readAll(executor, id, handle, LogStream.STDOUT)).isEqualTo("bye\n");
        }

        executor.forget(id.runId());
        executor.forget(id.runId()); // idempotent

        assertThat(executor.find(id)).isEmpty();
        assertThat(newExecutor().find(id)).isEmpty();
        assertThat(executor.find(other)).isPresent();
    }

    @Test
    void endpointsGetDistinctFreePorts() {
        Executor executor = newExecutor();
        InstanceId one = newInstanceId();
        io.slipstream.api.run.Endpoint first = executor.endpoint(one, "team-a", "main-0", nodeName(), 3, java.util.Set.of());
        assertThat(first.ports()).hasSize(3).doesNotHaveDuplicates();
        io.slipstream.api.run.Endpoint second = executor.endpoint(new InstanceId(one.runId(), 1, 1), "team-a", "main-1", nodeName(), 2,
                java.util.Set.copyOf(first.ports()));
        assertThat(second.ports()).hasSize(2).doesNotContainAnyElementsOf(first.ports());
        assertThat(first.fqdn()).isNotBlank();
    }

    /** Metadata of a run of job {@code job} in team-a with {@code count} instances and job-scoped storage "out". */
    protected static io.slipstream.api.run.ClusterMetadata metadata(InstanceId id, String job, int count) {
        List<io.slipstream.api.run.ClusterMetadata.Instance> instances = new ArrayList<>();
        for (int rank = 0; rank < count; rank++) {
            instances.add(new io.slipstream.api.run.ClusterMetadata.Instance("main-" + rank, "main", rank, rank, "n", "localhost", "localhost",
                    "127.0.0.1", List.of(40000 + rank), rank == 0));
        }
        return new io.slipstream.api.run.ClusterMetadata(io.slipstream.api.run.ClusterMetadata.FORMAT_VERSION, id.runId().value(), "team-a", job,
                id.attempt(), count, "InParallel", new io.slipstream.api.run.ClusterMetadata.Address("127.0.0.1", 40000), instances,
                List.of(new io.slipstream.api.run.ClusterMetadata.Storage("out", "job", "out", "/mnt/out")));
    }

    private LaunchSpec withMetadata(InstanceId id, String node, String script, io.slipstream.api.run.ClusterMetadata metadata,
                                           io.slipstream.api.spec.StartupProbe probe) {
        return new LaunchSpec(id, "main-0", node, List.of(), List.of("sh", "-c", script), Map.of(), null, image(), metadata, probe);
    }

    @Test
    void instancesFindTheRunsHostfileInBothMpiSyntaxes() throws Exception {
        assumeRunsCommands();
        Executor executor = newExecutor();
        InstanceId id = newInstanceId();
        Map<String, String> handle = launch(executor, withMetadata(id, nodeName(),
                "cat \"$SLIPSTREAM_HOSTFILE\" \"$SLIPSTREAM_MPICH_HOSTFILE\"", metadata(id, "mpi", 2), null));
        assertThat(awaitReport(id, InstanceReport.Exited.class).exitCode()).isZero();
        assertThat(readAll(executor, id, handle, LogStream.STDOUT)).isEqualTo("127.0.0.1 slots=2\n127.0.0.1:2\n");
    }

    @Test
    void instancesReadTheRunsMetadataAndShareStorageThatOutlivesTheRun() throws Exception {
        assumeRunsCommands();
        Executor executor = newExecutor();
        InstanceId writer = newInstanceId();
        Map<String, String> writerHandle = launch(executor, withMetadata(writer, nodeName(),
                "cat \"$SLIPSTREAM_METADATA_FILE\"; echo trained > \"$SLIPSTREAM_STORAGE_OUT/weights\"; "
                        + "echo step-7 > \"$SLIPSTREAM_CHECKPOINT_DIR/latest\"; echo hi > \"$SLIPSTREAM_SHARED_DIR/note\"",
                metadata(writer, "train", 2), null));
        assertThat(awaitReport(writer, InstanceReport.Exited.class).exitCode()).isZero();
        String printed = readAll(executor, writer, writerHandle, LogStream.STDOUT);
        var metadata = io.slipstream.api.codec.Json.mapper().readValue(printed, io.slipstream.api.run.ClusterMetadata.class);
        assertThat(metadata.instances()).extracting(io.slipstream.api.run.ClusterMetadata.Instance::rank).containsExactly(0, 1);
        assertThat(metadata.storage()).singleElement().satisfies(storage -> {
            assertThat(storage.path()).startsWith("/").endsWith("/out");
            assertThat(storage.mountPath()).isEqualTo("/mnt/out");
        });

        // Another run of the same job (another uid, when runs are isolated) reads and replaces what the first wrote.
        InstanceId reader = newInstanceId();
        Map<String, String> readerHandle = launch(executor, withMetadata(reader, nodeName(),
                "cat \"$SLIPSTREAM_STORAGE_OUT/weights\" && echo again > \"$SLIPSTREAM_STORAGE_OUT/weights\" && "
                        + "test ! -e \"$SLIPSTREAM_CHECKPOINT_DIR/latest\" && echo own-checkpoints",
                metadata(reader, "train", 1), null));
        assertThat(awaitReport(reader, InstanceReport.Exited.class).exitCode()).isZero();
        assertThat(readAll(executor, reader, readerHandle, LogStream.STDOUT)).isEqualTo("trained\nown-checkpoints\n");

        // Another job of the workspace does not see it.
        InstanceId stranger = newInstanceId();
        Map<String, String> strangerHandle = launch(executor, withMetadata(stranger, nodeName(),
                "test -e \"$SLIPSTREAM_STORAGE_OUT/weights\" && echo visible || echo absent", metadata(stranger, "other-job", 1), null));
        awaitReport(stranger, InstanceReport.Exited.class);
        assertThat(readAll(executor, stranger, strangerHandle, LogStream.STDOUT)).isEqualTo("absent\n");
    }

    @Test
    void aStartupProbeReportsReadinessOrFailure() throws Exception {
        assumeRunsCommands();
        Executor executor = newExecutor();
        InstanceId ready = newInstanceId();
        launch(executor, withMetadata(ready, nodeName(), "sleep 1; touch started; sleep 600", metadata(ready, "probed", 1),
                new io.slipstream.api.spec.StartupProbe(List.of("test", "-f", "started"), 1, 30, 0)));
        InstanceId never = newInstanceId();
        launch(executor, withMetadata(never, nodeName(), "sleep 600", metadata(never, "probed", 1),
                new io.slipstream.api.spec.StartupProbe(List.of("false"), 1, 2, 0)));

        assertThat(awaitReport(ready, InstanceReport.Ready.class).id()).isEqualTo(ready);
        assertThat(awaitReport(never, InstanceReport.ProbeFailed.class).reason()).contains("failed 2 time(s)");
    }

    @Test
    void secretsReachTheInstanceAsItsEnvironmentAndFilesOnly() throws Exception {
        assumeRunsCommands();
        Executor executor = newExecutor();
        InstanceId id = newInstanceId();
        String value = "hf_secret-" + System.nanoTime();
        io.slipstream.api.spec.SecretValue secret = io.slipstream.api.spec.SecretValue.of(value);
        LaunchSpec spec = withMetadata(id, nodeName(), "printf %s \"$API_KEY\" | sha256sum; sha256sum < \"$SLIPSTREAM_SECRETS_DIR/hf/token\"; "
                + "cat \"$SLIPSTREAM_SECRETS_DIR/hf/user\"; echo; ls \"$SLIPSTREAM_SECRETS_DIR/hf\"", metadata(id, "secrets", 1), null)
                .withSecrets(Map.of("API_KEY", new LaunchSpec.SecretEnv("hf", "token", secret)),
                        List.of(new LaunchSpec.SecretFiles("hf", "/var/run/secrets/hf", Map.of("token", secret,
                                "user", io.slipstream.api.spec.SecretValue.of("bot")))));
        assertThat(spec.toString()).doesNotContain(value);
        Map<String, String> handle = launch(executor, spec);
        assertThat(awaitReport(id, InstanceReport.Exited.class).exitCode()).isZero();
        String checksum = java.util.HexFormat.of().formatHex(java.security.MessageDigest.getInstance("SHA-256")
                .digest(value.getBytes(StandardCharsets.UTF_8)));
        assertThat(readAll(executor, id, handle, LogStream.STDOUT).lines().toList())
                .containsExactly(checksum + "  -", checksum + "  -", "bot", "token", "user");
        assertThat(handle.toString()).doesNotContain(value);
    }

    private static IdentityToken identityToken(String audience, int index, String token) {
        return new IdentityToken(audience, IdentityToken.fileOf(index), io.slipstream.api.spec.SecretValue.of(token));
    }

    /**
     * Identity tokens reach the instance as files its environment names, and a refresh replaces them where it reads them
     * (on Kubernetes through the attempt's Secret, which the kubelet writes again), each file whole; an ended instance is
     * not refreshed.
     */
    @Test
    void identityTokensReachTheInstanceAsFilesThatARefreshReplaces() throws Exception {
        Executor executor = newExecutor();
        org.junit.jupiter.api.Assumptions.assumeTrue(executor.deliversIdentity(), "the executor does not deliver identity tokens");
        InstanceId id = newInstanceId();
        String nonce = Long.toString(System.nanoTime());
        List<IdentityToken> first = List.of(identityToken("vault", 0, "first-vault-" + nonce), identityToken("https://minio.example.com/", 1, "first-minio-" + nonce));
        List<IdentityToken> second = List.of(identityToken("vault", 0, "second-vault-" + nonce), identityToken("https://minio.example.com/", 1, "second-minio-" + nonce));
        // After the gate, it reads until both files changed (a kubelet rewrites a Secret's files a moment after the change;
        // the test's kubelet one file after the other).
        String script = "f=\"$SLIPSTREAM_IDENTITY_TOKEN_FILE\"; d=$(dirname \"$f\"); old=$(cat \"$f\"); old1=$(cat \"$d/token-1.jwt\"); echo \"$old\"; "
                + "printf '%s\\n' \"$SLIPSTREAM_IDENTITY_TOKENS\"; cat " + gate(id) + " > /dev/null; "
                + "for i in $(seq 300); do new=$(cat \"$f\"); new1=$(cat \"$d/token-1.jwt\"); "
                + "[ \"$new\" != \"$old\" ] && [ \"$new1\" != \"$old1\" ] && break; sleep 0.1; done; "
                + "echo \"$new\"; cat \"$d/token-1.jwt\"; echo; ls -A \"$d\" | tr '\\n' ' '; echo";
        LaunchSpec spec = spec(id, nodeName(), script).withIdentity(first);
        assertThat(spec.toString()).doesNotContain(nonce);
        Map<String, String> handle = launch(executor, spec);
        if (runsCommands()) {
            awaitOutput(executor, id, handle, "minio");
        } else {
            awaitReport(id, InstanceReport.Running.class);
        }

        assertThat(executor.refreshIdentity(id, handle, second)).isTrue();
        if (runsCommands()) {
            openGate(id);
            assertThat(awaitReport(id, InstanceReport.Exited.class).exitCode()).isZero();
            List<String> lines = readAll(executor, id, handle, LogStream.STDOUT).lines().toList();
            assertThat(lines).hasSize(5);
            assertThat(lines.get(0)).isEqualTo("first-vault-" + nonce);
            Map<String, String> paths = io.slipstream.api.codec.Json.mapper().readValue(lines.get(1),
                    new tools.jackson.core.type.TypeReference<Map<String, String>>() { });
            assertThat(paths.keySet()).containsExactly("vault", "https://minio.example.com/");
            assertThat(paths.get("vault")).endsWith("/token-0.jwt");
            assertThat(paths.get("https://minio.example.com/")).endsWith("/token-1.jwt");
            assertThat(lines.subList(2, 4)).containsExactly("second-vault-" + nonce, "second-minio-" + nonce);
            assertThat(lines.get(4).trim().split(" ")).as("nothing half written left beside the tokens").containsExactlyInAnyOrder("token-0.jwt", "token-1.jwt");
        } else {
            executor.terminate(id, handle, Duration.ZERO, "test");
            awaitReport(id, InstanceReport.Exited.class);
        }
        assertThat(executor.refreshIdentity(id, handle, first)).as("an ended instance is not refreshed").isFalse();
    }

    @Test
    void launchOnAnUnknownNodeIsRefused() {
        Executor executor = newExecutor();
        assertThatThrownBy(() -> executor.launch(spec(newInstanceId(), "no-such-node", "true")))
                .isInstanceOf(ExecutorException.class)
                .hasMessageContaining("no-such-node");
    }

    /**
     * runType Async: an instance that ended is launched again under its id as restart 1. The new launch is a process of
     * its own, found as the instance from then on; only its own end is reported (the first one's exit code is never
     * read as its), and its log is its own.
     */
    @Test
    void anEndedInstanceRestartedInPlaceIsANewProcessWhoseOwnEndIsReported() throws Exception {
        Executor executor = newExecutor();
        org.junit.jupiter.api.Assumptions.assumeTrue(executor.restartsInPlace(), "the executor does not restart instances in place");
        assumeRunsCommands();
        InstanceId id = newInstanceId();
        Map<String, String> first = launch(executor, spec(id, nodeName(), "echo first; exit 137"));
        assertThat(awaitReport(id, InstanceReport.Exited.class).exitCode()).isEqualTo(137);
        String gate = gate(id);
        Map<String, String> second = launch(executor, spec(id, nodeName(), "echo second; cat " + gate + " > /dev/null; exit 3").withRestart(1));
        assertThat(Executor.restartOf(second)).isEqualTo(1);
        assertThat(Executor.restartOf(first)).isZero();
        assertThat(second.get(identityKey())).isNotEqualTo(first.get(identityKey()));
        assertThat(executor.find(id)).contains(second);
        awaitOutput(executor, id, second, "second");
        assertThat(executor.launch(spec(id, nodeName(), "echo third").withRestart(1))).as("the same restart again is adopted").isEqualTo(second);
        openGate(id);
        assertThat(awaitReport(id, InstanceReport.Exited.class).exitCode()).as("its own end, not the first one's 137").isEqualTo(3);
        assertThat(readAll(executor, id, second, LogStream.STDOUT)).isEqualTo("second\n");
    }

    /** A path the instance blocks on until {@link #openGate} is called (a named pipe where supported). */
    protected abstract String gate(InstanceId id);

    protected abstract void openGate(InstanceId id) throws Exception;

    /** Waits until the instance printed {@code text}, where it runs its command; else until the executor reports it running. */
    private void awaitStarted(Executor executor, InstanceId id, Map<String, String> handle, String text) throws InterruptedException {
        if (runsCommands()) {
            awaitOutput(executor, id, handle, text);
        } else {
            awaitReport(id, InstanceReport.Running.class);
        }
    }

    protected final void awaitOutput(Executor executor, InstanceId id, Map<String, String> handle, String text) throws InterruptedException {
        long deadline = System.nanoTime() + TIMEOUT.toNanos();
        while (!readAll(executor, id, handle, LogStream.STDOUT).contains(text)) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("instance " + id + " never printed " + text);
            }
            TimeUnit.MILLISECONDS.sleep(20); // polling the log with a deadline
        }
    }
}
