package io.slipstream.server.control;

import io.slipstream.api.run.InstanceId;
import io.slipstream.api.run.InstanceState;
import io.slipstream.api.spec.NodeGroupSpec;
import io.slipstream.executor.Executor;
import io.slipstream.executor.ExecutorException;
import io.slipstream.executor.LaunchSpec;
import io.slipstream.model.EventType;
import io.slipstream.model.InstanceRecord;
import io.slipstream.model.LaunchFailure;
import io.slipstream.model.RunRecord;
import io.slipstream.store.Store;
import io.slipstream.store.StoreTx;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Starts the placed instances a run's lifecycle lets start, with their environment, token and Secrets. Each launch is
 * recorded with its event, by the caller ({@link RunSteps}, with the run's next step); a launch the executor refuses,
 * or one whose Secrets are gone, ends that instance FAILED, which the lifecycle then judges.
 */
final class Launcher {
    private static final Logger LOG = LoggerFactory.getLogger(Launcher.class);

    private final Store store;
    private final Executor executor;
    private final Clock clock;
    private final io.slipstream.server.auth.RunTokens runTokens;
    /** Per run and cycle (see {@link #launch}). */
    static final int LAUNCHES_PER_CYCLE = 64;
    private final LaunchSecrets secrets;
    private final IdentityRefresh identity;
    /** Where each node is in the cluster's topology (level to domain), as the last cycle read it: for metadata and env. */
    private volatile Map<String, Map<String, String>> places = Map.of();

    /**
     * @param runTokens gives instances their run's token, or {@code null}
     * @param secrets   the values of the Secrets node groups refer to, or {@code null} (such a group then cannot start)
     * @param identity  signs the identity tokens runs ask for (and keeps them fresh)
     */
    Launcher(Store store, Executor executor, Clock clock, io.slipstream.server.auth.RunTokens runTokens, LaunchSecrets secrets,
             IdentityRefresh identity) {
        this.store = store;
        this.executor = executor;
        this.clock = clock;
        this.runTokens = runTokens;
        this.secrets = secrets;
        this.identity = identity;
    }

    /** The topology the cycle read, and the nodes: instances launched from now on learn where they are from these. */
    void useTopology(ClusterTopology topology, List<io.slipstream.executor.NodeInfo> nodes) {
        if (topology.levels().isEmpty()) {
            places = Map.of();
            return;
        }
        Map<String, Map<String, String>> byNode = new java.util.HashMap<>();
        for (io.slipstream.executor.NodeInfo node : nodes) {
            Map<String, String> place = topology.placeOf(node);
            if (!place.isEmpty()) {
                byNode.put(node.name(), place);
            }
        }
        places = byNode;
    }

    /** {@code SLIPSTREAM_TOPOLOGY_<LEVEL>}: the instance's domain at each level ({@code SLIPSTREAM_TOPOLOGY_RACK=r2}). */
    static Map<String, String> topologyEnv(Map<String, String> place) {
        Map<String, String> env = new java.util.LinkedHashMap<>();
        place.forEach((level, domain) -> env.put("SLIPSTREAM_TOPOLOGY_" + level.toUpperCase(java.util.Locale.ROOT).replace('-', '_'), domain));
        return env;
    }

    /**
     * What a launch did: the attempt's instances as they are afterwards, those of them it changed (launched, or ended
     * as unable to start) and has not recorded yet ({@link #record}), how many it launched (or failed to), and how many
     * of those could not start yet (their executor said so: they stay as they were, for a later cycle).
     */
    record Launched(List<InstanceRecord> instances, List<InstanceRecord> unrecorded, int count, int notReady) {
        /** Whether any instance changed. */
        boolean changed() {
            return count > notReady;
        }
    }

    /**
     * Launches {@code starting} (placed instances the run's lifecycle lets start), at most {@code allowed} of them: a
     * run launches at most {@link #LAUNCHES_PER_CYCLE} instances a cycle, so that a run of thousands of instances
     * makes the other runs wait a moment, not minutes; the rest stay pending for the next cycles, which follow at once.
     * The launches are left to the caller to record, in the transaction of the run's next step ({@link RunSteps}); a
     * launch that fails unexpectedly records what started before it at once. What the loop wrote before, the run's
     * admission among it, is durable before anything is launched ({@link Store#deferDurability}).
     */
    Launched launch(RunRecord run, List<InstanceRecord> instances, List<InstanceRecord> starting, int allowed) {
        store.awaitDurable();
        Set<InstanceId> chosen = new HashSet<>();
        Set<InstanceId> all = new HashSet<>();
        for (InstanceRecord instance : starting) {
            all.add(instance.id());
            if (chosen.size() < allowed) {
                chosen.add(instance.id());
            }
        }
        List<InstanceRecord> changed = launch(run, instances, chosen, all);
        Map<InstanceId, InstanceRecord> byId = new java.util.HashMap<>();
        changed.forEach(instance -> byId.put(instance.id(), instance));
        List<InstanceRecord> after = new ArrayList<>(instances.size());
        for (InstanceRecord instance : instances) {
            after.add(byId.getOrDefault(instance.id(), instance));
        }
        return new Launched(after, changed, chosen.size(), chosen.size() - changed.size());
    }

    /**
     * @param starting launched now
     * @param started  what the metadata lists as started: every instance allowed to start, those the budget leaves
     *                 for the next cycles too (they start with these, moments later)
     * @return the instances the launches changed (one that cannot start yet is as it was: nothing to record)
     */
    private List<InstanceRecord> launch(RunRecord run, List<InstanceRecord> instances, Set<InstanceId> starting, Set<InstanceId> started) {
        Map<String, NodeGroupSpec> groups = run.spec().nodeGroups().stream().collect(Collectors.toMap(NodeGroupSpec::name, g -> g));
        Map<String, Map<String, String>> nodePlaces = places;
        var metadata = RunMetadata.of(run, instances, started, nodePlaces);
        Map<String, String> credentials = runTokens == null ? Map.of() : runTokens.env(run.id(), run.attempt());
        // Signed once for the instances launched together; a run whose tokens cannot be signed starts none of them.
        List<io.slipstream.executor.IdentityToken> tokens = List.of();
        String identityRefused = null;
        try {
            boolean firstOfAttempt = instances.stream().noneMatch(i -> i.id().attempt() == run.attempt() && i.state() == InstanceState.RUNNING);
            tokens = identity.signForLaunch(run, clock.instant(), firstOfAttempt);
        } catch (RunIdentity.Unavailable e) {
            identityRefused = e.getMessage();
        }
        // Read once per group and launch: the instances started together see the same values.
        Map<String, GroupSecrets> resolved = new java.util.HashMap<>();
        // One after another: the executor serializes a run's launches (one lock per run); runs launch side by side.
        List<InstanceRecord> changed = new ArrayList<>();
        try {
            for (InstanceRecord instance : instances) {
                if (!starting.contains(instance.id())) {
                    continue;
                }
                NodeGroupSpec group = groups.get(instance.nodeGroup());
                Map<String, String> env = new java.util.LinkedHashMap<>(InstanceEnv.of(run, group, instance, metadata.master()));
                env.putAll(credentials);
                if (instance.node() != null) {
                    env.putAll(topologyEnv(nodePlaces.getOrDefault(instance.node(), Map.of())));
                }
                LaunchSpec spec = new LaunchSpec(instance.id(), instance.displayName(), instance.node(), instance.gpus(), group.command(), env,
                        group.workingDir(), group.image(), metadata, group.startupProbe(), group.resources()).withRestart(instance.restarts())
                        .withNetwork(run.spec().networkMode())
                        .withBorrowed(run.realTimeResources() == io.slipstream.api.run.RealTimeResources.NotInQuota)
                        .withMemoryLimit(group.memoryLimitBytes())
                        .withLabels(run.origin().labels());
                GroupSecrets groupSecrets = resolved.computeIfAbsent(group.name(), name -> secretsOf(run, group));
                InstanceRecord after;
                if (identityRefused != null) {
                    LOG.warn("instance {} cannot start: {}", instance.id(), identityRefused);
                    after = instance.notLaunched(LaunchFailure.IDENTITY_UNAVAILABLE, identityRefused, clock.instant());
                } else if (groupSecrets instanceof Refused refused) {
                    LOG.warn("instance {} cannot start: {}", instance.id(), refused.why());
                    after = instance.notLaunched(LaunchFailure.SECRETS_UNAVAILABLE, refused.why(), clock.instant());
                } else {
                    LaunchSecrets.Resolved values = ((Given) groupSecrets).values();
                    after = launchOne(instance, spec.withSecrets(values.env(), values.files()).withIdentity(tokens));
                }
                if (!after.equals(instance)) {
                    changed.add(after);
                }
            }
        } catch (RuntimeException | Error e) {
            // What started is recorded at once (its launch is then found, never repeated), and the launch fails.
            try {
                if (!changed.isEmpty()) {
                    record(changed);
                }
            } catch (RuntimeException notRecorded) {
                e.addSuppressed(notRecorded);
            }
            throw e;
        }
        return changed;
    }

    /**
     * The instance as its launch left it: RUNNING with its handle, ended, with why it could not start, or as it was
     * if it cannot start yet ({@link LaunchNotReadyException}: a later cycle launches it again).
     */
    private InstanceRecord launchOne(InstanceRecord instance, LaunchSpec spec) {
        try {
            return instance.running(executor.launch(spec), clock.instant());
        } catch (io.slipstream.executor.LaunchNotReadyException e) {
            LOG.info("instance {} starts later: {}", instance.id(), e.getMessage());
            return instance;
        } catch (ExecutorException e) {
            // A launch a crash cut short may have started it already: then it runs, and is not a failure to forget.
            Optional<Map<String, String>> started = startedBefore(instance);
            if (started.isPresent()) {
                LOG.warn("launch of {} failed ({}), but it had started before: it is taken as launched", instance.id(), e.getMessage());
                return instance.running(started.get(), clock.instant());
            }
            LOG.warn("launch of {} failed: {}", instance.id(), e.getMessage());
            return instance.notLaunched(LaunchFailure.EXECUTOR_FAILED, e.getMessage(), clock.instant());
        }
    }

    /** The instance's handle if the executor has it (this restart of it), or empty; a failure to look is empty too. */
    private Optional<Map<String, String>> startedBefore(InstanceRecord instance) {
        try {
            return executor.find(instance.id()).filter(found -> Executor.restartOf(found) == instance.restarts());
        } catch (RuntimeException e) {
            LOG.warn("could not ask whether {} had started before: {}", instance.id(), e.toString());
            return Optional.empty();
        }
    }

    /**
     * Records launches with their events in one transaction (each in its own if one of them conflicts: the run
     * changed meanwhile, and the next cycle takes it from what is stored).
     */
    List<InstanceRecord> record(List<InstanceRecord> launched) {
        Instant at = clock.instant();
        Batched.Outcome<InstanceRecord, InstanceRecord> outcome = Batched.write(store, launched, (tx, instance) -> record(tx, instance, at));
        if (!outcome.conflicted().isEmpty()) {
            throw new io.slipstream.store.ConflictException("instance " + outcome.conflicted().get(0).id() + " changed while it was launched");
        }
        return outcome.written();
    }

    /**
     * Records launches with their events, stamped {@code at} (the time of the caller's own change, so that the run's
     * history never goes back in time), in {@code tx}, a transaction of the caller's; returns them as stored.
     */
    List<InstanceRecord> record(StoreTx tx, List<InstanceRecord> launched, Instant at) {
        List<InstanceRecord> stored = new ArrayList<>(launched.size());
        for (InstanceRecord instance : launched) {
            stored.add(record(tx, instance, at));
        }
        return stored;
    }

    private InstanceRecord record(StoreTx tx, InstanceRecord launched, Instant at) {
        InstanceRecord stored = tx.updateInstance(launched);
        EventType type = stored.state() == InstanceState.RUNNING ? EventType.InstanceStarted : EventType.InstanceExited;
        tx.appendEvent(io.slipstream.model.RunEvent.of(stored.id().runId(), at, type, stored.state().name(),
                stored.state() == InstanceState.RUNNING ? "Started" + gpusText(stored) + containmentNote() + enforcementNote(stored) : stored.reason(), null,
                stored.displayName()));
        return stored;
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

    /** Said on the run where stopping it cannot guarantee that nothing of it survives (see docs/security.md). */
    private String containmentNote() {
        return switch (executor.containment()) {
            case EVERY_PROCESS -> "";
            case PROCESS_TREE -> " (not contained: it runs as the server's user, so processes it detaches can outlive it)";
        };
    }

    /**
     * The limits the executor does not hold this instance to, where it can say: memory, cpu and pids for every instance,
     * devices for one with GPUs (docs/security.md).
     */
    private String enforcementNote(InstanceRecord instance) {
        io.slipstream.executor.ResourceEnforcement enforcement = executor.enforcement();
        if (enforcement == null) {
            return "";
        }
        List<String> missing = new ArrayList<>();
        for (String limit : instance.gpus().isEmpty() ? List.of("memory", "cpu", "pids") : List.of("memory", "cpu", "pids", "devices")) {
            if (!enforcement.enforced().contains(limit)) {
                missing.add(limit);
            }
        }
        return missing.isEmpty() ? "" : " (not enforced here: " + String.join(", ", missing) + ")";
    }

    private static String gpusText(InstanceRecord instance) {
        return instance.gpus().isEmpty() ? "" : " with GPUs " + instance.gpus().stream().map(String::valueOf).collect(Collectors.joining(","));
    }
}
