package io.slipstream.server.control;

import io.slipstream.api.run.RunId;
import io.slipstream.executor.Executor;
import io.slipstream.model.ElasticWorld;
import io.slipstream.model.InstanceRecord;
import io.slipstream.model.RunRecord;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The ports of every endpoint still held, by the executor's port domain ({@link Executor#portDomain}): a new
 * endpoint avoids those of its node's domain only, so a cluster of hosts is not held to one machine's ports. An elastic
 * run's members keep theirs while its world changes, stopped or not: they start again with them.
 */
final class PortsInUse {
    private final Executor executor;
    private final Map<String, Set<Integer>> byDomain = new HashMap<>();

    private PortsInUse(Executor executor) {
        this.executor = executor;
    }

    /** As the runs' instances hold them now, before any decision of the cycle. */
    static PortsInUse of(Executor executor, Map<RunId, RunRecord> runs, Map<RunId, List<InstanceRecord>> instances) {
        PortsInUse ports = new PortsInUse(executor);
        instances.forEach((runId, list) -> {
            RunRecord run = runs.get(runId);
            ElasticWorld changing = run == null || run.world() == null || !run.world().changing() ? null : run.world();
            for (InstanceRecord i : list) {
                if (i.endpoint() != null && (!i.state().isFinal() || changing != null && changing.isMember(i.id().rank()))) {
                    ports.take(i.node(), i.endpoint().ports());
                }
            }
        });
        return ports;
    }

    /** The ports taken in {@code node}'s domain, for {@link Executor#endpoint}. */
    Set<Integer> takenOn(String node) {
        Set<Integer> taken = byDomain.get(executor.portDomain(node));
        return taken == null ? Set.of() : Collections.unmodifiableSet(taken);
    }

    /** Marks {@code ports} held on {@code node}: endpoints given later in the cycle avoid them. */
    void take(String node, List<Integer> ports) {
        if (!ports.isEmpty()) {
            byDomain.computeIfAbsent(executor.portDomain(node), domain -> new HashSet<>()).addAll(ports);
        }
    }
}
