package io.slipstream.server.api;

import io.slipstream.api.codec.Json;
import io.slipstream.api.spec.Document;
import io.slipstream.api.spec.JobSpec;
import io.slipstream.api.spec.ObjectMeta;
import io.slipstream.api.spec.SpecWriter;
import io.slipstream.api.wire.InstanceView;
import io.slipstream.api.wire.JobStatusView;
import io.slipstream.api.wire.RunEventView;
import io.slipstream.api.wire.RunView;
import io.slipstream.model.InstanceRecord;
import io.slipstream.model.RunEvent;
import io.slipstream.model.RunRecord;
import io.slipstream.server.control.SchedulePlan;
import io.slipstream.store.StoredDocument;
import java.util.List;
import tools.jackson.databind.node.ObjectNode;

/** Maps stored records to what the API returns. */
final class Views {
    private Views() {
    }

    /** The word shown instead of a node's name to those who may not see it. */
    static final String HIDDEN = "hidden";

    /**
     * A run as {@code caller} may see it: the nodes a run on idle capacity borrows belong to other teams' quotas, so
     * only admins see their names.
     */
    static RunView run(RunRecord run, List<InstanceRecord> instances, RunView.QueueView queue, boolean withSpec, boolean admin) {
        boolean showNodes = showsNodes(run, admin);
        java.util.Set<String> hidden = hiddenNodes(run, instances, admin);
        return new RunView(run.id().value(), run.job(), run.workspace(), run.origin().submittedBy(),
                run.origin().labels().isEmpty() ? null : run.origin().labels(), run.jobVersion(), run.state(), redact(run.reason(), hidden),
                run.realTimeResources(), run.spec().quota(),
                run.attempt(), run.preemptions(), run.priority(), queue, run.createdAt(), run.startedAt(), run.finishedAt(),
                run.cancelRequestedAt(), run.origin().overrides().isEmpty() ? null : run.origin().overrides(), run.origin().scheduleTime(),
                restarts(run, hidden), progress(run),
                nodeGroups(run, instances),
                instances.stream().map(i -> instance(i, showNodes && (admin || i.id().attempt() == run.attempt() && onOwnGuarantee(run, i)), hidden))
                        .toList(),
                withSpec ? SpecWriter.write(new Document<>(ObjectMeta.of(run.job(), run.workspace()), run.spec())) : null, world(run));
    }

    /** An elastic run's world as shown: its size and how its instances stand ({@code null}: a rigid run, or one holding nothing). */
    static RunView.WorldView world(RunRecord run) {
        var world = run.world();
        if (world == null || !run.state().holdsResources()) {
            return null;
        }
        int minimum = 0;
        int maximum = 0;
        for (var group : run.spec().nodeGroups()) {
            minimum += group.minimum();
            maximum += group.replicas();
        }
        int notInQuota = world.notInQuota(run.realTimeResources());
        return new RunView.WorldView(world.version(), world.members().size(), minimum, maximum, world.members().size() - notInQuota, notInQuota,
                world.changing());
    }

    /**
     * Whether an instance of a run is on the run's own guarantee: a rigid run's all are; of an elastic run, only members
     * of its world not on idle capacity (a slot removed stood as it did; its node is not said).
     */
    static boolean onOwnGuarantee(RunRecord run, InstanceRecord instance) {
        var world = run.world();
        return world == null || world.isMember(instance.id().rank()) && !world.borrowed().contains(instance.id().rank());
    }

    static RunView.RestartsView restarts(RunRecord run, java.util.Set<String> hidden) {
        var faults = run.faults();
        var retryAt = run.state() == io.slipstream.api.run.RunState.QUEUED ? faults.retryAt() : null;
        return new RunView.RestartsView(faults.failures(), run.preemptions(), faults.nodeLost(), faults.hangs(), retryAt, redact(faults.lastError(), hidden),
                faults.sameErrorCount());
    }

    static RunView.ProgressView progress(RunRecord run) {
        var faults = run.faults();
        return new RunView.ProgressView(faults.progressStep(), faults.progressAt(), faults.checkpointStep(), faults.checkpointAt(),
                faults.workLostMillis() / 1000.0);
    }

    /** Counts per node group, of the current attempt's instances. */
    static List<RunView.NodeGroupView> nodeGroups(RunRecord run, List<InstanceRecord> instances) {
        List<RunView.NodeGroupView> groups = new java.util.ArrayList<>();
        for (var group : run.spec().nodeGroups()) {
            int[] counts = new int[6];
            for (InstanceRecord instance : instances) {
                if (instance.id().attempt() != run.attempt() || !instance.nodeGroup().equals(group.name())) {
                    continue;
                }
                int slot = switch (instance.state()) {
                    case PENDING -> 0;
                    case RUNNING -> group.startupProbe() != null && instance.readyAt() == null ? 1 : 2;
                    case SUCCEEDED -> 3;
                    case FAILED, LOST, NODE_LOST -> 4;
                    case KILLED, RESOURCE_PREEMPTED -> 5;
                };
                counts[slot]++;
            }
            groups.add(new RunView.NodeGroupView(group.name(), group.replicas(), group.requiredSuccesses(), counts[0], counts[1], counts[2],
                    counts[3], counts[4], counts[5], group.elastic() ? group.minimum() : null));
        }
        return groups;
    }

    /**
     * Whether the caller may see the nodes of the run's current attempt: admins always; others only while it holds its
     * quota's own guarantee. A run queued again or ended no longer says where its last attempt got its resources, and
     * that attempt may have borrowed: its nodes stay hidden, as those of every earlier attempt do.
     */
    static boolean showsNodes(RunRecord run, boolean admin) {
        return admin || (run.state().holdsResources() && run.realTimeResources() == io.slipstream.api.run.RealTimeResources.InQuota);
    }

    /**
     * The names of the nodes {@code run}'s instances were placed on when {@code admin} may not see them, else none:
     * reasons name nodes ("NodeLost: node N is down"), and those names are hidden there too.
     */
    static java.util.Set<String> hiddenNodes(RunRecord run, List<InstanceRecord> instances, boolean admin) {
        if (admin) {
            return java.util.Set.of();
        }
        java.util.Set<String> shown = shownNodes(run, instances);
        java.util.Set<String> nodes = new java.util.TreeSet<>();
        for (InstanceRecord instance : instances) {
            if (instance.node() != null && !instance.node().isEmpty()) {
                nodes.add(instance.node());
            }
        }
        nodes.removeAll(shown); // a node its current attempt holds on its own guarantee is shown anyway
        return nodes;
    }

    /** The nodes a non-admin may see of the run: those its current attempt holds on its own guarantee. */
    private static java.util.Set<String> shownNodes(RunRecord run, List<InstanceRecord> instances) {
        java.util.Set<String> shown = new java.util.HashSet<>();
        if (!showsNodes(run, false)) {
            return shown;
        }
        for (InstanceRecord instance : instances) {
            if (instance.node() != null && !instance.node().isEmpty() && instance.id().attempt() == run.attempt() && onOwnGuarantee(run, instance)) {
                shown.add(instance.node());
            }
        }
        return shown;
    }

    /** {@code text} with each of {@code nodes} named as a whole word replaced by {@link #HIDDEN}. */
    static String redact(String text, java.util.Set<String> nodes) {
        if (text == null || nodes.isEmpty()) {
            return text;
        }
        String redacted = text;
        for (String node : nodes) {
            redacted = redacted.replaceAll("(?<![A-Za-z0-9_.-])" + java.util.regex.Pattern.quote(node) + "(?![A-Za-z0-9_-])", HIDDEN);
        }
        return redacted;
    }

    static InstanceView instance(InstanceRecord instance, boolean showNode, java.util.Set<String> hidden) {
        return new InstanceView(instance.nodeGroup(), instance.id().rank(), instance.groupRank(), instance.id().attempt(),
                showNode ? instance.node() : HIDDEN,
                instance.gpus(), instance.state(), instance.exitCode(), redact(instance.reason(), hidden), instance.endCause(),
                memoryPeak(instance.usage()), instance.usage() == null ? null : instance.usage().cpuSeconds(), instance.startedAt(),
                instance.readyAt(), instance.finishedAt(),
                instance.endpoint() == null || !showNode ? null : instance.endpoint().ip(),
                instance.endpoint() == null || !showNode ? null : instance.endpoint().ports(), instance.restarts());
    }

    /** A measured memory peak as a quantity ({@code "1536Mi"}), or {@code null}. */
    private static String memoryPeak(io.slipstream.api.run.InstanceUsage usage) {
        return usage == null || !usage.hasMemoryPeak() ? null : io.slipstream.api.spec.Quantities.formatBytes(usage.memoryPeakBytes());
    }

    /** How the lifecycle names a node in a reason: "NodeLost: node N is down", "NodeDrain: node N is drained". */
    private static final java.util.regex.Pattern NODE_NAMED = java.util.regex.Pattern.compile("\\bnode ([^\\s()]+) is (?:down|drained)\\b");

    /**
     * A run's events as {@code admin} (or not) may see them. Besides the nodes its instances' records name, a non-admin
     * does not see a node an event names that the run does not hold on its own guarantee now: an elastic run's slot
     * removed and grown again elsewhere has a record of its new node only, while its history names the one it left.
     */
    static List<RunEventView> events(RunRecord run, List<InstanceRecord> instances, List<RunEvent> events, boolean admin) {
        java.util.Set<String> hidden = new java.util.TreeSet<>(hiddenNodes(run, instances, admin));
        if (!admin) {
            java.util.Set<String> shown = shownNodes(run, instances);
            for (RunEvent event : events) {
                for (String text : new String[] {event.reason(), event.message()}) {
                    java.util.regex.Matcher named = NODE_NAMED.matcher(text == null ? "" : text);
                    while (named.find()) {
                        if (!shown.contains(named.group(1))) {
                            hidden.add(named.group(1));
                        }
                    }
                }
            }
        }
        return events.stream().map(event -> event(event, hidden)).toList();
    }

    static RunEventView event(RunEvent event, java.util.Set<String> hidden) {
        return new RunEventView(event.seq(), event.time(), event.type().name(), event.state(), redact(event.reason(), hidden),
                redact(event.message(), hidden), event.instance());
    }

    static ObjectNode document(StoredDocument stored) {
        return SpecWriter.write(stored.versioned());
    }

    /** A document as listed or fetched: a scheduled job also has its status (when it runs next), from the schedules' own plan. */
    static ObjectNode document(StoredDocument stored, java.time.Instant now) {
        ObjectNode document = document(stored);
        if (stored.document().spec() instanceof JobSpec job && job.schedule() != null) {
            JobStatusView status = new JobStatusView(SchedulePlan.next(job.schedule(), now).orElse(null));
            document.set("status", Json.mapper().valueToTree(status));
        }
        return document;
    }
}
