package io.slipstream.sdk;

import java.io.IOException;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * What every instance of a run learns about the run: the JSON file at {@code SLIPSTREAM_METADATA_FILE}, written
 * completely before the instance starts (docs/distributed.md). Format version {@value #FORMAT_VERSION}: fields are
 * only ever added within a version, so fields this SDK does not know are skipped; another version is refused.
 *
 * @param master    rank 0's address and first port ({@code MASTER_ADDR}, {@code MASTER_PORT})
 * @param instances every instance of this attempt, by global rank; with {@code InOrder} startup, those of groups that
 *                  have not been started yet are present with {@code started: false}
 * @param storage   the run's shared storage; {@code path} is where it is on this instance's machine
 */
public record ClusterMetadata(
        int version,
        String runId,
        String workspace,
        String job,
        int attempt,
        int worldSize,
        String startupOrder,
        Address master,
        List<Instance> instances,
        List<Storage> storage) {

    public static final int FORMAT_VERSION = 1;

    public ClusterMetadata {
        instances = List.copyOf(instances);
        storage = List.copyOf(storage);
    }

    /**
     * One instance: who it is in the run, and where to reach it; {@code topology}: where its node is in the cluster's
     * topology, level to domain, broadest first ({@code {block: b1, rack: r2}}; empty without one).
     */
    public record Instance(String name, String nodeGroup, int rank, int groupRank, String node, String hostname, String fqdn, String ip,
                           List<Integer> ports, boolean started, Map<String, String> topology) {
        public Instance {
            ports = List.copyOf(ports);
            topology = topology == null ? Map.of() : java.util.Collections.unmodifiableMap(new java.util.LinkedHashMap<>(topology));
        }

        /** An instance on a node of no topology. */
        public Instance(String name, String nodeGroup, int rank, int groupRank, String node, String hostname, String fqdn, String ip,
                        List<Integer> ports, boolean started) {
            this(name, nodeGroup, rank, groupRank, node, hostname, fqdn, ip, ports, started, Map.of());
        }
    }

    /** An instance's place in the topology: level to domain, in the file's order; absent reads as none. */
    private static Map<String, String> places(Object value) {
        Map<String, String> places = new java.util.LinkedHashMap<>();
        if (value == null) {
            return places;
        }
        object(value, "topology").forEach((level, domain) -> {
            if (domain instanceof String text) {
                places.put(level, text);
            }
        });
        return places;
    }

    public record Address(String addr, int port) {
    }

    /** Shared storage: {@code path} on this machine, {@code mountPath} on clusters. */
    public record Storage(String name, String scope, String path, String mountPath) {
    }

    /** Reads a metadata file. @throws IOException if it cannot be read or is not metadata of this format */
    public static ClusterMetadata read(Path file) throws IOException {
        try {
            return parse(Files.readString(file, StandardCharsets.UTF_8));
        } catch (IllegalArgumentException e) {
            throw new IOException(file + ": " + e.getMessage(), e);
        }
    }

    /** Reads metadata from its JSON. @throws IllegalArgumentException if it is not metadata of this format */
    public static ClusterMetadata parse(String json) {
        Map<String, Object> root = object(MiniJson.parse(json), "the metadata");
        int version = integer(root, "version", 0);
        if (version != FORMAT_VERSION) {
            throw new IllegalArgumentException("metadata format version " + version + " is not " + FORMAT_VERSION
                    + ", the one this SDK reads");
        }
        Map<String, Object> master = object(root.get("master"), "master");
        List<Instance> instances = new ArrayList<>();
        for (Object item : list(root.get("instances"), "instances")) {
            Map<String, Object> instance = object(item, "an instance");
            List<Integer> ports = new ArrayList<>();
            for (Object port : list(instance.get("ports"), "ports")) {
                ports.add(number(port, "ports").intValueExact());
            }
            instances.add(new Instance(text(instance, "name"), text(instance, "nodeGroup"), integer(instance, "rank", 0),
                    integer(instance, "groupRank", 0), text(instance, "node"), text(instance, "hostname"), text(instance, "fqdn"),
                    text(instance, "ip"), ports, !Boolean.FALSE.equals(instance.get("started")), places(instance.get("topology"))));
        }
        List<Storage> storage = new ArrayList<>();
        for (Object item : list(root.get("storage"), "storage")) {
            Map<String, Object> entry = object(item, "a storage");
            storage.add(new Storage(text(entry, "name"), text(entry, "scope"), text(entry, "path"), text(entry, "mountPath")));
        }
        return new ClusterMetadata(version, text(root, "runId"), text(root, "workspace"), text(root, "job"), integer(root, "attempt", 1),
                integer(root, "worldSize", instances.size()), text(root, "startupOrder"),
                new Address(text(master, "addr"), integer(master, "port", 0)), instances, storage);
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> object(Object value, String what) {
        if (value == null) {
            return Map.of();
        }
        if (!(value instanceof Map)) {
            throw new IllegalArgumentException(what + " is not a JSON object");
        }
        return (Map<String, Object>) value;
    }

    private static List<?> list(Object value, String what) {
        if (value == null) {
            return List.of();
        }
        if (!(value instanceof List<?> items)) {
            throw new IllegalArgumentException(what + " is not a JSON array");
        }
        return items;
    }

    private static String text(Map<String, Object> object, String field) {
        Object value = object.get(field);
        if (value != null && !(value instanceof String)) {
            throw new IllegalArgumentException(field + " is not a string");
        }
        return (String) value;
    }

    private static int integer(Map<String, Object> object, String field, int otherwise) {
        Object value = object.get(field);
        return value == null ? otherwise : number(value, field).intValueExact();
    }

    private static BigDecimal number(Object value, String field) {
        if (!(value instanceof BigDecimal number)) {
            throw new IllegalArgumentException(field + " is not a number");
        }
        return number;
    }
}
