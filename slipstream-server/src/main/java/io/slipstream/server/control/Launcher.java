package io.slipstream.server.control;

import io.slipstream.api.run.InstanceId;
import io.slipstream.api.run.InstanceState;
import io.slipstream.api.spec.NodeGroupSpec;
import io.slipstream.api.spec.StartupOrder;
import io.slipstream.executor.Executor;
import io.slipstream.executor.ExecutorException;
import io.slipstream.executor.LaunchSpec;
import io.slipstream.model.InstanceRecord;
import io.slipstream.model.RunRecord;
import io.slipstream.store.Store;
import java.time.Clock;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Starts a run's placed instances when they may start: all at once ({@code InParallel}), or a node group only once
 * every instance of the groups before it is ready ({@code InOrder}). Each launch is recorded with its event; a launch
 * the executor refuses ends that instance FAILED, which fails the run.
 */
final class Launcher {
    private static final Logger LOG = LoggerFactory.getLogger(Launcher.class);

    private final Store store;
    private final Executor executor;
    private final Clock clock;
    private final io.slipstream.server.auth.RunTokens runTokens;
    /** Per run and cycle (see {@link #newCycle}). */
    static final int LAUNCHES_PER_CYCLE = 64;
    private int budget = LAUNCHES_PER_CYCLE;
    private boolean deferred;
    private final LaunchSecrets secrets;

    /**
     * @param runTokens gives instances their run's token, or {@code null}
     * @param secrets   the values of the Secrets node groups refer to, or {@code null} (such a group then cannot start)
     */
    Launcher(Store store, Executor executor, Clock clock, io.slipstream.server.auth.RunTokens runTokens, LaunchSecrets secrets) {
        this.store = store;
        this.executor = executor;
        this.clock = clock;
        this.runTokens = runTokens;
        this.secrets = secrets;
    }

    /** Whether an instance lets the next group start: its probe passed, it runs without a probe, or it succeeded. */
    static boolean isReady(InstanceRecord instance, NodeGroupSpec group) {
        return instance.state() == InstanceState.SUCCEEDED
                || instance.state() == InstanceState.RUNNING && (group.startupProbe() == null || instance.readyAt() != null);
    }

    /**
     * Launches what may start now, group after group while the groups started are ready at once (no probe); returns
     * the attempt's instances as they are afterwards.
     */
    List<InstanceRecord> launchWhatMayStart(RunRecord run, List<InstanceRecord> instances) {
        budget = LAUNCHES_PER_CYCLE;
        List<InstanceRecord> current = instances;
        for (Set<InstanceId> starting = startable(run, current); !starting.isEmpty() && budget > 0; starting = startable(run, current)) {
            current = launch(run, current, starting);
        }
        return current;
    }

    /**
     * A run launches at most {@link #LAUNCHES_PER_CYCLE} instances a cycle, so that a run of thousands of instances
     * makes the other runs wait a moment, not minutes: the rest stay pending and start in the next cycles, which
     * follow at once.
     */
    void newCycle() {
        deferred = false;
    }

    /** Whether the cycle left instances pending that it could have started. */
    boolean deferred() {
        return deferred;
    }

    private List<InstanceRecord> launch(RunRecord run, List<InstanceRecord> instances, Set<InstanceId> starting) {
        Map<String, NodeGroupSpec> groups = run.spec().nodeGroups().stream().collect(Collectors.toMap(NodeGroupSpec::name, g -> g));
        var metadata = RunMetadata.of(run, instances, starting);
        Map<String, String> credentials = runTokens == null ? Map.of() : runTokens.env(run.id(), run.attempt());
        List<InstanceRecord> current = new ArrayList<>(instances.size());
        // Read once per group and launch: the instances started together see the same values.
        Map<String, GroupSecrets> resolved = new java.util.HashMap<>();
        for (InstanceRecord instance : instances) {
            if (!starting.contains(instance.id())) {
                current.add(instance);
                continue;
            }
            if (budget <= 0) {
                current.add(instance); // next cycle
                deferred = true;
                continue;
            }
            budget--;
            NodeGroupSpec group = groups.get(instance.nodeGroup());
            Map<String, String> env = new java.util.LinkedHashMap<>(InstanceEnv.of(run, group, instance, metadata.master()));
            env.putAll(credentials);
            LaunchSpec spec = new LaunchSpec(instance.id(), instance.displayName(), instance.node(), instance.gpus(), group.command(), env,
                    group.workingDir(), group.image(), metadata, group.startupProbe(), group.resources());
            GroupSecrets groupSecrets = resolved.computeIfAbsent(group.name(), name -> secretsOf(run, group));
            InstanceRecord updated;
            String type;
            if (groupSecrets instanceof Refused refused) {
                LOG.warn("instance {} cannot start: {}", instance.id(), refused.why());
                updated = instance.finished(InstanceState.FAILED, null, LaunchSecrets.Unavailable.REASON + ": " + refused.why(), clock.instant());
                type = "InstanceExited";
            } else {
                LaunchSecrets.Resolved values = ((Given) groupSecrets).values();
                try {
                    updated = instance.running(executor.launch(spec.withSecrets(values.env(), values.files())), clock.instant());
                    type = "InstanceStarted";
                } catch (ExecutorException e) {
                    LOG.warn("launch of {} failed: {}", instance.id(), e.getMessage());
                    updated = instance.finished(InstanceState.FAILED, null, "LaunchFailed: " + e.getMessage(), clock.instant());
                    type = "InstanceExited";
                }
            }
            InstanceRecord launched = updated;
            String eventType = type;
            current.add(store.inTransaction(tx -> {
                InstanceRecord stored = tx.updateInstance(launched);
                tx.appendEvent(io.slipstream.model.RunEvent.of(stored.id().runId(), clock.instant(), eventType, stored.state().name(),
                        stored.state() == InstanceState.RUNNING ? "Started" + gpusText(stored) + containmentNote() : stored.reason(), null,
                        stored.displayName()));
                return stored;
            }));
        }
        return current;
    }

    /** What a group's instances get of Secrets: the values, or why they cannot have them. */
    private sealed interface GroupSecrets permits Given, Refused {
    }

    private record Given(LaunchSecrets.Resolved values) implements GroupSecrets {
    }

    private record Refused(String why) implements GroupSecrets {
    }

    private GroupSecrets secretsOf(RunRecord run, NodeGroupSpec group) {
        if (!group.usesSecrets()) {
            return new Given(LaunchSecrets.Resolved.NONE);
        }
        if (secrets == null) {
            return new Refused("this server gives instances no secrets");
        }
        try {
            return new Given(secrets.resolve(run.workspace(), group));
        } catch (LaunchSecrets.Unavailable e) {
            return new Refused(e.getMessage());
        }
    }

    /** The pending instances that may start: all of them, or with InOrder those of the first group not yet ready. */
    private static Set<InstanceId> startable(RunRecord run, List<InstanceRecord> instances) {
        Set<InstanceId> pending = new HashSet<>();
        if (run.spec().startupOrder() == StartupOrder.InParallel) {
            instances.stream().filter(i -> i.state() == InstanceState.PENDING).forEach(i -> pending.add(i.id()));
            return pending;
        }
        for (NodeGroupSpec group : run.spec().nodeGroups()) {
            List<InstanceRecord> members = instances.stream().filter(i -> i.nodeGroup().equals(group.name())).toList();
            members.stream().filter(i -> i.state() == InstanceState.PENDING).forEach(i -> pending.add(i.id()));
            if (!pending.isEmpty() || !members.stream().allMatch(i -> isReady(i, group))) {
                return pending; // this group starts (or is still starting): later groups wait for it
            }
        }
        return pending;
    }

    /** Said on the run where stopping it cannot guarantee that nothing of it survives (see docs/security.md). */
    private String containmentNote() {
        return switch (executor.containment()) {
            case EVERY_PROCESS -> "";
            case PROCESS_TREE -> " (not contained: it runs as the server's user, so processes it detaches can outlive it)";
        };
    }

    private static String gpusText(InstanceRecord instance) {
        return instance.gpus().isEmpty() ? "" : " with GPUs " + instance.gpus().stream().map(String::valueOf).collect(Collectors.joining(","));
    }
}
