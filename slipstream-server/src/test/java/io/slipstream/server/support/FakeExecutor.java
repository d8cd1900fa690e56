package io.slipstream.server.support;

import io.slipstream.api.run.InstanceId;
import io.slipstream.api.run.RunId;
import io.slipstream.api.spec.Resources;
import io.slipstream.executor.Executor;
import io.slipstream.executor.ExecutorException;
import io.slipstream.executor.InstanceReport;
import io.slipstream.executor.LaunchSpec;
import io.slipstream.executor.LogChunk;
import io.slipstream.executor.LogStream;
import io.slipstream.executor.NodeInfo;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;

/**
 * A scripted executor: launches succeed (or fail on nodes told to refuse), nothing runs, and instances end when the
 * test says so. Records every call for assertions.
 */
public final class FakeExecutor implements Executor {
    private final List<NodeInfo> nodes;
    private final Clock clock;
    private final Map<InstanceId, LaunchSpec> launched = new LinkedHashMap<>();
    private final List<InstanceId> terminated = new ArrayList<>();
    private final Map<InstanceId, String> terminations = new LinkedHashMap<>();
    private final List<Map<InstanceId, Map<String, String>>> adoptions = new ArrayList<>();
    private final List<RunId> forgotten = new ArrayList<>();
    private final Map<InstanceId, String> logs = new ConcurrentHashMap<>();
    private final Map<InstanceId, io.slipstream.executor.Activity> activities = new ConcurrentHashMap<>();
    private int nextPort = 30000;
    private final Set<String> refusingNodes = ConcurrentHashMap.newKeySet();
    private Consumer<InstanceReport> listener = r -> {
    };

    public FakeExecutor(Clock clock, int nodeCount, int gpusPerNode) {
        this.clock = clock;
        List<NodeInfo> list = new ArrayList<>();
        for (int i = 1; i <= nodeCount; i++) {
            list.add(new NodeInfo("node-" + i, new Resources(32_000, 256L << 30, gpusPerNode, "sim-gpu"), null, Map.of()));
        }
        this.nodes = List.copyOf(list);
    }

    public void refuseLaunchesOn(String node) {
        refusingNodes.add(node);
    }

    /** The instance's process "exits" with this code. */
    public void exit(InstanceId id, int code) {
        listener.accept(new InstanceReport.Exited(id, code, false, clock.instant()));
    }

    /** Confirms that a terminated instance is gone. */
    public void confirmTerminated(InstanceId id, int code) {
        listener.accept(new InstanceReport.Exited(id, code, true, clock.instant()));
    }

    public void report(InstanceReport report) {
        listener.accept(report);
    }

    public synchronized Map<InstanceId, LaunchSpec> launched() {
        return Map.copyOf(launched);
    }

    public synchronized List<InstanceId> terminated() {
        return List.copyOf(terminated);
    }

    public synchronized List<Map<InstanceId, Map<String, String>>> adoptions() {
        return List.copyOf(adoptions);
    }

    private static Map<String, String> handleOf(InstanceId id) {
        return Map.of("fake", id.toString());
    }

    @Override
    public List<NodeInfo> nodes() {
        return nodes;
    }

    /** Every instance on 10.0.0.<node number>, ports counted up from 30000. */
    @Override
    public synchronized io.slipstream.api.run.Endpoint endpoint(io.slipstream.api.run.InstanceId id, String workspace, String name, String node, int ports, Set<Integer> taken) {
        List<Integer> given = new ArrayList<>();
        while (given.size() < ports) {
            int port = nextPort++;
            if (!taken.contains(port)) {
                given.add(port);
            }
        }
        String ip = "10.0.0." + node.substring(node.lastIndexOf('-') + 1);
        return new io.slipstream.api.run.Endpoint(node, node + ".cluster.local", ip, given);
    }

    @Override
    public void setListener(Consumer<InstanceReport> listener) {
        this.listener = listener;
    }

    @Override
    public synchronized Map<String, String> launch(LaunchSpec spec) {
        if (refusingNodes.contains(spec.node())) {
            throw new ExecutorException("node " + spec.node() + " refuses launches");
        }
        launched.putIfAbsent(spec.id(), spec);
        return handleOf(spec.id());
    }

    @Override
    public synchronized Optional<Map<String, String>> find(InstanceId id) {
        return launched.containsKey(id) ? Optional.of(handleOf(id)) : Optional.empty();
    }

    @Override
    public synchronized void adopt(Map<InstanceId, Map<String, String>> handles) {
        adoptions.add(Map.copyOf(handles));
    }

    @Override
    public synchronized void terminate(InstanceId id, Map<String, String> handle, Duration gracePeriod, String reason) {
        terminated.add(id);
        terminations.put(id, reason + " / " + gracePeriod);
    }

    /** Why, and with which grace period, each instance was told to stop. */
    public synchronized Map<InstanceId, String> terminations() {
        return Map.copyOf(terminations);
    }

    /** What the instance "printed" (on stderr). */
    public void log(InstanceId id, String text) {
        logs.merge(id, text, String::concat);
    }

    /** What the instance last showed of its life. */
    public void activity(InstanceId id, io.slipstream.executor.Activity activity) {
        activities.put(id, activity);
    }

    @Override
    public io.slipstream.executor.Activity activity(InstanceId id, Map<String, String> handle) {
        return activities.getOrDefault(id, io.slipstream.executor.Activity.NONE);
    }

    @Override
    public LogChunk readLog(InstanceId id, Map<String, String> handle, LogStream stream, long offset, int maxBytes) {
        return new LogChunk(new byte[0], offset);
    }

    @Override
    public LogChunk readLogTail(InstanceId id, Map<String, String> handle, LogStream stream, int maxBytes) {
        byte[] text = stream == LogStream.STDERR ? logs.getOrDefault(id, "").getBytes(java.nio.charset.StandardCharsets.UTF_8) : new byte[0];
        int from = Math.max(0, text.length - maxBytes);
        return new LogChunk(java.util.Arrays.copyOfRange(text, from, text.length), text.length);
    }

    @Override
    public synchronized void forget(RunId runId) {
        launched.keySet().removeIf(id -> id.runId().equals(runId));
        forgotten.add(runId);
    }

    public synchronized List<RunId> forgotten() {
        return List.copyOf(forgotten);
    }

    /** Pretends that an instance was launched earlier (by a previous server that crashed before recording it). */
    public synchronized void pretendLaunched(LaunchSpec spec) {
        launched.put(spec.id(), spec);
    }

    @Override
    public void close() {
    }
}
