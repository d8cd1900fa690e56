package io.slipstream.executor.slurm;

import io.slipstream.executor.ExecutorException;
import io.slipstream.executor.NodeInfo;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The partition's nodes, read with {@code sinfo} at start and again every {@code slurm.nodeRefresh}: the control loop
 * asks for them every cycle, and gets what was read last. A node Slurm will not start jobs on (down, drained or
 * draining, not responding, powered down, in maintenance) is not offered: like a Kubernetes node that is not Ready, it
 * takes no new instance until Slurm has it back.
 */
final class SlurmNodes {
    private static final Logger LOG = LoggerFactory.getLogger(SlurmNodes.class);

    private final SlurmCommands commands;
    private final SlurmSettings settings;
    /** Every node of the partition, placeable or not, by name. */
    private volatile Map<String, SlurmNode> nodes = Map.of();
    /** Each node's IP address, resolved from its {@code NodeAddr} once (a name's lookup is not redone on every endpoint). */
    private final Map<String, String> ips = new ConcurrentHashMap<>();
    /** What was said once about nodes left out (never again at every refresh). */
    private final Set<String> told = ConcurrentHashMap.newKeySet();
    private final java.util.concurrent.atomic.AtomicBoolean refreshing = new java.util.concurrent.atomic.AtomicBoolean();
    /** Why the last refresh failed, or {@code null}. */
    private volatile String problem;

    SlurmNodes(SlurmCommands commands, SlurmSettings settings) {
        this.commands = commands;
        this.settings = settings;
    }

    /**
     * Reads the partition's nodes now.
     *
     * @throws ExecutorException if Slurm does not answer, or the partition has no node
     */
    void refresh() {
        String output = commands.run("sinfo", "--noheader", "--Node", "--partition=" + settings.partition(), "--format=" + SlurmNode.SINFO_FORMAT);
        Map<String, SlurmNode> read = new TreeMap<>();
        for (String line : output.split("\n")) {
            if (line.isBlank()) {
                continue;
            }
            SlurmNode node;
            try {
                node = SlurmNode.parse(line, settings.gpuModel(), this::tellOnce);
            } catch (IllegalArgumentException e) {
                tellOnce("a line of sinfo is not understood and its node is left out: " + e.getMessage());
                continue;
            }
            if (node != null) {
                read.put(node.name(), node);
            }
        }
        if (read.isEmpty()) {
            throw new ExecutorException("Slurm's partition " + settings.partition() + " has no node Slipstream can use (or no such partition:"
                    + " see sinfo --partition=" + settings.partition() + "; slurm.partition)");
        }
        Map<String, Map<String, String>> places = topology();
        read.replaceAll((name, node) -> node.withLabels(places.getOrDefault(name, Map.of())));
        Map<String, SlurmNode> before = nodes;
        read.values().forEach(node -> {
            SlurmNode was = before.get(node.name());
            if (was == null || was.placeable() != node.placeable() || !Objects.equals(was.info(), node.info())) {
                LOG.info("Slurm node {}: {}, {}", node.name(), node.placeable() ? "takes instances" : node.unavailable(), node.info().capacity());
            }
            ips.computeIfAbsent(node.name(), name -> resolve(node.address() != null ? node.address() : name));
        });
        before.keySet().stream().filter(name -> !read.containsKey(name)).forEach(name -> LOG.info("Slurm node {} left partition {}", name,
                settings.partition()));
        nodes = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(read)); // by name
    }

    /**
     * Each node's place in Slurm's network tree, as labels ({@link SlurmTopology}); none without a topology, or when
     * scontrol cannot say (said once).
     */
    private Map<String, Map<String, String>> topology() {
        String output;
        try {
            output = commands.run("scontrol", "show", "topology");
        } catch (ExecutorException e) {
            tellOnce("Slurm's topology cannot be read (nodes carry no topology labels): " + e.getMessage());
            return Map.of();
        }
        return output.contains("SwitchName=") ? SlurmTopology.labels(output, this::tellOnce) : Map.of(); // topology/none says so in words
    }

    /**
     * Refreshes, logging (not throwing) when Slurm does not answer: the nodes read last stay. Skipped while another
     * refresh runs (a slow controller must not pile them up).
     */
    /** Why the last refresh failed, or {@code null}. */
    String problem() {
        return problem;
    }

    void refreshQuietly() {
        if (!refreshing.compareAndSet(false, true)) {
            return;
        }
        try {
            refresh();
            problem = null;
        } catch (RuntimeException e) {
            if (problem == null) {
                LOG.warn("cannot read the nodes of partition {} (the last ones read stay): {}", settings.partition(), e.getMessage());
            }
            problem = "cannot read the nodes of partition " + settings.partition() + " (the last ones read stay): " + e.getMessage();
        } finally {
            refreshing.set(false);
        }
    }

    /** The nodes instances may be placed on now, by name. */
    List<NodeInfo> placeable() {
        return nodes.values().stream().filter(SlurmNode::placeable).map(SlurmNode::info).toList();
    }

    /** The node of that name in the partition, placeable or not, or {@code null}. */
    SlurmNode get(String name) {
        return nodes.get(name);
    }

    /** Every node of the partition, placeable or not. */
    Map<String, SlurmNode> all() {
        return nodes;
    }

    /** The node's IP address, or {@code null} when its {@code NodeAddr} does not resolve here. */
    String ipOf(String name) {
        String ip = ips.get(name);
        return ip == null || ip.isEmpty() ? null : ip;
    }

    private static String resolve(String address) {
        try {
            return InetAddress.getByName(address).getHostAddress();
        } catch (UnknownHostException e) {
            return ""; // known to be unknown: not looked up again
        }
    }

    private void tellOnce(String message) {
        if (told.add(message)) {
            LOG.warn(message);
        }
    }
}
