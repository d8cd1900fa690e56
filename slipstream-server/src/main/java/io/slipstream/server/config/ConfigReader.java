package io.slipstream.server.config;

import io.slipstream.api.codec.DocumentParser;
import io.slipstream.api.problem.Problems;
import io.slipstream.api.spec.Durations;
import io.slipstream.api.spec.FieldReader;
import io.slipstream.api.spec.Names;
import io.slipstream.api.spec.SpecReader;
import io.slipstream.api.spec.Resources;
import io.slipstream.executor.NodeInfo;
import io.slipstream.executor.kubernetes.KubernetesConfig;
import io.slipstream.executor.local.Isolation;
import io.slipstream.executor.local.LocalProcessExecutor;
import io.slipstream.executor.local.MachineNode;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;
import tools.jackson.databind.JsonNode;

/**
 * Reads the server's YAML config file. Every problem is reported with its field path, like specs; unknown fields
 * are errors (a typo in a config must not be silently ignored).
 *
 * <pre>
 * server: {host: 127.0.0.1, port: 8080}
 * store: {url: jdbc:postgresql://db/slipstream, username: slipstream, password: secret}
 * executor: local             # or kubernetes, with a kubernetes: block (docs/kubernetes.md) and no nodes
 * nodes:                       # or: nodes: auto
 *   - {namePrefix: node, count: 4, cpu: 32, memory: 256Gi, gpu: 8, gpuModel: sim-gpu}
 * instances: {inheritEnv: [PATH, HOME], gracePeriod: 30s}
 * runs: {maxRuntime: 30d, retention: 30d}
 * secrets: {keyFile: /etc/slipstream/secret.key}   # previousKeyFile: while rotating it
 * tokens: {pepperFile: /etc/slipstream/token.pepper}
 * </pre>
 */
public final class ConfigReader {
    /** Four nodes of 32 cpu, 256Gi and 8 simulated GPUs: enough to try gangs on a laptop. */
    public static List<NodeInfo> defaultNodes() {
        List<NodeInfo> nodes = new ArrayList<>();
        for (int i = 1; i <= 4; i++) {
            nodes.add(new NodeInfo("node-" + i, new Resources(32_000, 256L << 30, 8, "sim-gpu"), null, Map.of()));
        }
        return nodes;
    }

    public static ServerConfig defaults(Path dataDir) {
        return new ServerConfig("127.0.0.1", 8080, dataDir, null, null, null, defaultNodes(),
                LocalProcessExecutor.DEFAULT_INHERITED_ENV, LocalInstances.DEFAULTS, RunLimits.DEFAULTS, Duration.ofSeconds(1), null,
                KeyFiles.DEFAULTS);
    }

    private ConfigReader() {
    }

    /**
     * Reads a config file over the defaults.
     *
     * @param machine describes this machine, for {@code nodes: auto} (injected so tests need no nvidia-smi)
     * @throws io.slipstream.api.problem.InvalidInputException naming every problem
     */
    public static ServerConfig read(byte[] yaml, ServerConfig base, Supplier<NodeInfo> machine) {
        JsonNode tree = DocumentParser.parseOne(yaml);
        Problems problems = new Problems();
        FieldReader root = FieldReader.of(tree, "", problems);
        String host = base.host();
        int port = base.port();
        FieldReader server = root.object("server", false);
        if (server != null) {
            String configuredHost = server.string("host", false, 253);
            host = configuredHost == null ? host : configuredHost;
            Long configuredPort = server.integer("port", false, 0, 65_535);
            port = configuredPort == null ? port : configuredPort.intValue();
            server.finish();
        }
        String storeUrl = base.storeUrl();
        String storeUser = base.storeUser();
        String storePassword = base.storePassword();
        FieldReader store = root.object("store", false);
        if (store != null) {
            storeUrl = store.string("url", true, 2048);
            if (storeUrl != null && !storeUrl.startsWith("jdbc:postgresql:") && !storeUrl.startsWith("jdbc:h2:")) {
                problems.add(store.pathOf("url"), "must be a jdbc:postgresql: or jdbc:h2: URL");
            }
            storeUser = store.string("username", false, 256);
            storePassword = store.string("password", false, 1024);
            store.finish();
        }
        String executor = root.string("executor", false, 64);
        KubernetesConfig kubernetes = base.kubernetes();
        if (executor != null && !executor.equals("local") && !executor.equals("kubernetes")) {
            problems.add("executor", "'" + executor + "' is not an executor of this build (available: local, kubernetes)");
        } else if (executor != null) {
            kubernetes = executor.equals("kubernetes") ? KubernetesConfig.defaults() : null;
        }
        FieldReader cluster = root.object("kubernetes", false);
        if (cluster != null && kubernetes == null) {
            problems.add("kubernetes", "is read only with executor: kubernetes");
        } else if (cluster != null) {
            kubernetes = readKubernetes(cluster, problems);
        }
        if (kubernetes != null && root.get("nodes") != null) {
            problems.add("nodes", "the Kubernetes executor takes its nodes from the cluster (kubernetes.nodeSelector picks them)");
        }
        List<NodeInfo> nodes = readNodes(root, base.nodes(), machine, problems);
        List<String> inheritEnv = base.inheritEnv();
        LocalInstances local = base.instances();
        Duration gracePeriod = base.limits().gracePeriod();
        Duration maxGracePeriod = base.limits().maxGracePeriod();
        Duration maxRuntime = base.limits().maxRuntime();
        Duration retention = base.limits().retention();
        FieldReader instances = root.object("instances", false);
        if (instances != null) {
            List<JsonNode> names = instances.array("inheritEnv", false, 256);
            if (names != null) {
                List<String> list = new ArrayList<>();
                for (int i = 0; i < names.size(); i++) {
                    if (!names.get(i).isString() || !names.get(i).asString().matches("[A-Za-z_][A-Za-z0-9_]*")) {
                        problems.add(instances.pathOf("inheritEnv") + "[" + i + "]", "must be an environment variable name");
                    } else {
                        list.add(names.get(i).asString());
                    }
                }
                inheritEnv = list;
            }
            Duration grace = duration(instances, "gracePeriod", problems);
            gracePeriod = grace == null ? gracePeriod : grace;
            Duration maxGrace = duration(instances, "maxGracePeriod", problems);
            maxGracePeriod = maxGrace == null ? maxGracePeriod : maxGrace;
            Isolation.Mode mode = instances.enumValue("isolation", Isolation.Mode.class, false);
            local = mode == null ? local : local.withIsolation(mode);
            int[] range = readUidRange(instances, problems);
            if (range != null) {
                local = local.withUidRange(new io.slipstream.executor.local.UidRangeClaims.Range(range[0], range[1]));
            }
            Path claims = absolutePath(instances, "uidClaims", problems);
            local = claims == null ? local : local.withUidClaims(claims);
            Long logLimit = quantity(instances, "logLimit", problems);
            local = logLimit == null ? local : local.withLogLimit(logLimit);
            Long processes = instances.integer("maxProcessesPerRun", false, 64, 4_194_304);
            local = processes == null ? local : local.withMaxProcessesPerRun(processes.intValue());
            instances.finish();
        }
        FieldReader runs = root.object("runs", false);
        if (runs != null) {
            Duration limit = duration(runs, "maxRuntime", problems);
            if (limit != null && (limit.compareTo(io.slipstream.api.spec.JobSpec.MAX_RUNTIME) > 0 || limit.isZero())) {
                problems.add(runs.pathOf("maxRuntime"), "must be between 1s and 30d: runs are never allowed longer than 30 days");
            } else if (limit != null) {
                maxRuntime = limit;
            }
            Duration keep = duration(runs, "retention", problems);
            if (keep != null && keep.compareTo(Duration.ofDays(1)) < 0) {
                // Shorter would drop idempotency keys (kept 24 h with their run) and runs a client may still be waiting for.
                problems.add(runs.pathOf("retention"), "must be at least 1d (is " + Durations.format(keep) + ")");
            } else {
                retention = keep == null ? retention : keep;
            }
            runs.finish();
        }
        KeyFiles keys = base.keys();
        FieldReader secrets = root.object("secrets", false);
        if (secrets != null) {
            Path keyFile = absolutePath(secrets, "keyFile", problems);
            Path previousKeyFile = absolutePath(secrets, "previousKeyFile", problems);
            if (keyFile != null && keyFile.equals(previousKeyFile)) {
                problems.add(secrets.pathOf("previousKeyFile"), "must be another file than keyFile (the key the secrets were sealed with before)");
            }
            secrets.finish();
            keys = new KeyFiles(keyFile == null ? keys.secretKey() : keyFile, previousKeyFile, keys.tokenPepper());
        }
        FieldReader tokens = root.object("tokens", false);
        if (tokens != null) {
            Path pepperFile = absolutePath(tokens, "pepperFile", problems);
            tokens.finish();
            keys = new KeyFiles(keys.secretKey(), keys.previousSecretKey(), pepperFile == null ? keys.tokenPepper() : pepperFile);
        }
        root.finish();
        if (gracePeriod.compareTo(maxGracePeriod) > 0) {
            problems.add("instances.gracePeriod", "must not be longer than instances.maxGracePeriod (" + Durations.format(maxGracePeriod) + ")");
        }
        problems.throwIfAny("the config file is invalid");
        return new ServerConfig(host, port, base.dataDir(), storeUrl, storeUser, storePassword, nodes, inheritEnv, local,
                new RunLimits(gracePeriod, maxGracePeriod, maxRuntime, retention), base.tickInterval(), kubernetes, keys);
    }

    private static final java.util.regex.Pattern QUANTITY = java.util.regex.Pattern.compile("[0-9]+(\\.[0-9]+)?(Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E)?");
    private static final java.util.regex.Pattern LABEL_KEY =
            java.util.regex.Pattern.compile("([a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?");
    private static final java.util.regex.Pattern LABEL_VALUE = java.util.regex.Pattern.compile("([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?");

    /** The {@code kubernetes:} block: how the Kubernetes executor reaches and uses the cluster (docs/kubernetes.md). */
    private static KubernetesConfig readKubernetes(FieldReader cluster, Problems problems) {
        KubernetesConfig defaults = KubernetesConfig.defaults();
        String kubeconfig = cluster.string("kubeconfig", false, 4096);
        String context = cluster.string("context", false, 253);
        String namespace = cluster.string("namespace", false, 63);
        if (namespace != null && Names.dnsLabelProblem(namespace) != null) {
            problems.add(cluster.pathOf("namespace"), Names.dnsLabelProblem(namespace));
        }
        Map<String, String> namespaces = new LinkedHashMap<>();
        var perWorkspace = cluster.entries("namespaces", false, 1000);
        if (perWorkspace != null) {
            for (var entry : perWorkspace) {
                String field = cluster.pathOf("namespaces") + "." + entry.getKey();
                String value = entry.getValue().isString() ? entry.getValue().asString() : "";
                if (Names.dnsLabelProblem(entry.getKey()) != null) {
                    problems.add(field, "is not a workspace name: " + Names.dnsLabelProblem(entry.getKey()));
                } else if (Names.dnsLabelProblem(value) != null) {
                    problems.add(field, "must be a namespace name: " + Names.dnsLabelProblem(value));
                } else {
                    namespaces.put(entry.getKey(), value);
                }
            }
        }
        String clusterDomain = cluster.string("clusterDomain", false, 253);
        Map<String, String> nodeSelector = new LinkedHashMap<>();
        var selector = cluster.entries("nodeSelector", false, 32);
        if (selector != null) {
            for (var entry : selector) {
                String key = cluster.pathOf("nodeSelector") + "." + entry.getKey();
                if (!LABEL_KEY.matcher(entry.getKey()).matches()) {
                    problems.add(key, "is not a Kubernetes label name");
                } else if (!entry.getValue().isString() || !LABEL_VALUE.matcher(entry.getValue().asString()).matches()) {
                    problems.add(key, "must be a label value: at most 63 letters, digits, '-', '_' or '.'");
                } else {
                    nodeSelector.put(entry.getKey(), entry.getValue().asString());
                }
            }
        }
        String gpuModelLabel = cluster.string("gpuModelLabel", false, 316);
        if (gpuModelLabel != null && !LABEL_KEY.matcher(gpuModelLabel).matches()) {
            problems.add(cluster.pathOf("gpuModelLabel"), "is not a Kubernetes label name");
        }
        Duration notReadyTimeout = duration(cluster, "notReadyTimeout", problems);
        if (notReadyTimeout != null && notReadyTimeout.compareTo(Duration.ofSeconds(10)) < 0) {
            problems.add(cluster.pathOf("notReadyTimeout"), "must be at least 10s: a node's status comes every few seconds");
        }
        String storageClass = null;
        String storageSize = null;
        String existingClaim = null;
        FieldReader storage = cluster.object("storage", false);
        if (storage != null) {
            storageClass = storage.string("storageClass", false, 253);
            storageSize = storage.string("size", false, 32);
            if (storageSize != null && !QUANTITY.matcher(storageSize).matches()) {
                problems.add(storage.pathOf("size"), "must be a Kubernetes quantity such as 100Gi");
            }
            existingClaim = storage.string("existingClaim", false, 253);
            if (existingClaim != null && storageClass != null) {
                problems.add(storage.pathOf("existingClaim"), "give either existingClaim or storageClass, not both");
            }
            storage.finish();
        }
        String utilityImage = cluster.string("utilityImage", false, 512);
        String serverUrl = cluster.string("serverUrl", false, 2048);
        if (serverUrl != null && !serverUrl.matches("https?://[^\\s/]+(/\\S*)?")) {
            problems.add(cluster.pathOf("serverUrl"), "must be an http:// or https:// URL");
        }
        List<String> pullSecrets = new ArrayList<>();
        List<JsonNode> secrets = cluster.array("imagePullSecrets", false, 16);
        if (secrets != null) {
            for (int i = 0; i < secrets.size(); i++) {
                if (!secrets.get(i).isString() || Names.dnsLabelProblem(secrets.get(i).asString()) != null) {
                    problems.add(cluster.pathOf("imagePullSecrets") + "[" + i + "]", "must be the name of a Secret");
                } else {
                    pullSecrets.add(secrets.get(i).asString());
                }
            }
        }
        cluster.finish();
        return new KubernetesConfig(kubeconfig, context, namespace == null ? defaults.namespace() : namespace, namespaces, clusterDomain, nodeSelector,
                gpuModelLabel, notReadyTimeout, storageClass, storageSize, existingClaim, utilityImage, pullSecrets, serverUrl);
    }

    /** {@code uidRange: "200000-265535"}: {first, count}, or null if absent or wrong (the problem is recorded). */
    private static int[] readUidRange(FieldReader instances, Problems problems) {
        String range = instances.string("uidRange", false, 32);
        if (range == null) {
            return null;
        }
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("(\\d{4,10})-(\\d{4,10})").matcher(range);
        long from = m.matches() ? Long.parseLong(m.group(1)) : -1;
        long to = m.matches() ? Long.parseLong(m.group(2)) : -1;
        if (from < 1000 || to < from || to >= Integer.MAX_VALUE) {
            problems.add(instances.pathOf("uidRange"), "must be FIRST-LAST with 1000 <= FIRST <= LAST, e.g. 200000-265535");
            return null;
        }
        return new int[] {(int) from, (int) (to - from + 1)};
    }

    /** A size such as {@code 1Gi}: 0 (no limit) or at least 1Mi; {@code null} if absent or wrong (the problem is recorded). */
    private static Long quantity(FieldReader reader, String field, Problems problems) {
        JsonNode value = reader.get(field);
        if (value == null) {
            return null;
        }
        if (!value.isString() && !value.isIntegralNumber()) {
            problems.add(reader.pathOf(field), "must be a size such as 1Gi or 500Mi (0: no limit), not " + FieldReader.describe(value));
            return null;
        }
        try {
            long bytes = io.slipstream.api.spec.Quantities.MEMORY.parse(value.asString());
            if (bytes != 0 && bytes < (1L << 20)) {
                problems.add(reader.pathOf(field), "must be 0 (no limit) or at least 1Mi (is " + value.asString() + ")");
                return null;
            }
            return bytes;
        } catch (IllegalArgumentException e) {
            problems.add(reader.pathOf(field), e.getMessage());
            return null;
        }
    }

    /** An absolute path, or {@code null} if absent or not one (the problem is recorded). */
    private static Path absolutePath(FieldReader reader, String field, Problems problems) {
        String text = reader.string(field, false, 4096);
        if (text == null) {
            return null;
        }
        try {
            Path path = Path.of(text);
            if (path.isAbsolute()) {
                return path.normalize();
            }
        } catch (java.nio.file.InvalidPathException e) {
            // reported below
        }
        problems.add(reader.pathOf(field), "must be an absolute path (is '" + text + "')");
        return null;
    }

    private static Duration duration(FieldReader reader, String field, Problems problems) {
        String text = reader.string(field, false, 32);
        if (text == null) {
            return null;
        }
        try {
            return Durations.parse(text);
        } catch (IllegalArgumentException e) {
            problems.add(reader.pathOf(field), e.getMessage());
            return null;
        }
    }

    private static List<NodeInfo> readNodes(FieldReader root, List<NodeInfo> fallback, Supplier<NodeInfo> machine, Problems problems) {
        JsonNode value = root.get("nodes");
        if (value == null) {
            return fallback;
        }
        if (value.isString() && value.asString().equals("auto")) {
            return List.of(machine.get());
        }
        List<JsonNode> items = root.array("nodes", false, 10_000);
        if (items == null) {
            problems.add("nodes", "must be 'auto' or a list of node declarations");
            return fallback;
        }
        List<NodeInfo> nodes = new ArrayList<>();
        Set<String> names = new HashSet<>();
        for (int i = 0; i < items.size(); i++) {
            FieldReader node = FieldReader.of(items.get(i), "nodes[" + i + "]", problems);
            String name = node.string("name", false, 63);
            String prefix = node.string("namePrefix", false, 50);
            Long count = node.integer("count", false, 1, 10_000);
            Resources capacity = readCapacity(node, problems);
            Map<String, String> labels = new LinkedHashMap<>();
            var entries = node.entries("labels", false, 64);
            if (entries != null) {
                entries.forEach(e -> labels.put(e.getKey(), e.getValue().asString()));
            }
            node.finish();
            if (name == null && prefix == null) {
                problems.add(node.pathOf("name"), "give a name, or a namePrefix and a count");
                continue;
            }
            if (name != null && (prefix != null || count != null)) {
                problems.add(node.pathOf("name"), "give either name, or namePrefix with count, not both");
                continue;
            }
            if (capacity == null) {
                continue;
            }
            List<String> nodeNames = new ArrayList<>();
            if (name != null) {
                nodeNames.add(name);
            } else {
                for (int k = 1; k <= (count == null ? 1 : count); k++) {
                    nodeNames.add(prefix + "-" + k);
                }
            }
            for (String nodeName : nodeNames) {
                String problem = Names.dnsLabelProblem(nodeName);
                if (problem != null) {
                    problems.add(node.pathOf(name != null ? "name" : "namePrefix"), problem);
                    break;
                }
                if (!names.add(nodeName)) {
                    problems.add(node.path(), "node " + nodeName + " is declared twice");
                    break;
                }
                nodes.add(new NodeInfo(nodeName, capacity, null, labels));
            }
        }
        if (items.isEmpty()) {
            problems.add("nodes", "must declare at least one node");
        }
        return nodes;
    }

    private static Resources readCapacity(FieldReader node, Problems problems) {
        int before = problems.list().size();
        Long milliCpu = SpecReader.readCpu(node, true, 1, Long.MAX_VALUE / 2);
        Long memory = SpecReader.readMemory(node, true, 1, Long.MAX_VALUE / 2);
        Long gpu = node.integer("gpu", false, 0, 1024);
        String gpuModel = node.string("gpuModel", false, 128);
        if (gpu != null && gpu > 0 && gpuModel == null) {
            problems.add(node.pathOf("gpuModel"), "is required when the node has GPUs");
        }
        if (problems.list().size() > before || milliCpu == null || memory == null) {
            return null;
        }
        return new Resources(milliCpu, memory, gpu == null ? 0 : gpu.intValue(), gpuModel);
    }
}
