package io.slipstream.server.config;

import io.slipstream.api.codec.DocumentParser;
import io.slipstream.api.codec.Json;
import io.slipstream.api.problem.Problems;
import io.slipstream.api.spec.Durations;
import io.slipstream.api.spec.FieldReader;
import io.slipstream.executor.ExecutorFactory;
import io.slipstream.executor.ExecutorSettings;
import io.slipstream.scheduler.FairSharingPreemption;
import io.slipstream.store.StoreFactory;
import io.slipstream.store.StoreSettings;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;

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
 * fairSharing: {preemption: LessThanOrEqualToFinalShare}   # or Never: borrowers in share order, without preemption
 * identity: {issuer: https://slipstream.example.com}   # the public URL of runs' identity tokens (docs/identity.md)
 * </pre>
 *
 * <p>The server reads its own fields only. The store ({@code store:}) and the executor ({@code executor:} and the
 * fields its {@link ExecutorFactory#configFields()} name, such as the local executor's {@code nodes:} and most of
 * {@code instances:}) are read by the plug-ins of their names ({@link Plugins}), into the same list of problems.
 */
public final class ConfigReader {
    private static final Logger LOG = LoggerFactory.getLogger(ConfigReader.class);
    /** The executor without {@code executor:} in the config file. */
    public static final String DEFAULT_EXECUTOR = "local";
    /** The store without a {@code store:} block: the embedded one under the data dir. */
    public static final String DEFAULT_STORE = "h2";

    /** The defaults: loopback, port 8080, the embedded store and the local executor with its defaults. */
    public static ServerConfig defaults(Path dataDir) {
        return defaults(dataDir, Plugins.installed());
    }

    public static ServerConfig defaults(Path dataDir, Plugins plugins) {
        Problems problems = new Problems();
        ExecutorSettings executor = plugins.executorOf(DEFAULT_EXECUTOR).read(FieldReader.of(Json.mapper().createObjectNode(), "", problems));
        StoreSettings store = plugins.storeOf(DEFAULT_STORE).read(FieldReader.of(Json.mapper().createObjectNode(), "store", problems));
        if (!problems.isEmpty()) {
            throw new IllegalStateException("the defaults of executor " + DEFAULT_EXECUTOR + " or store " + DEFAULT_STORE
                    + " are refused by their own readers: " + problems.list());
        }
        return new ServerConfig("127.0.0.1", 8080, dataDir, store, executor, RunLimits.DEFAULTS, Duration.ofSeconds(1), KeyFiles.DEFAULTS);
    }

    private ConfigReader() {
    }

    /** Reads a config file over the defaults, with the plug-ins of the class path. */
    public static ServerConfig read(byte[] yaml, ServerConfig base) {
        return read(yaml, base, Map.of(), Plugins.installed());
    }

    /**
     * Reads a config file over the defaults.
     *
     * @param yaml      the config file, or {@code null} for none
     * @param base      the server's defaults and its data dir ({@link #defaults}); the store and the executor come
     *                  from the file (absent: the defaults of {@value #DEFAULT_STORE} and {@value #DEFAULT_EXECUTOR})
     * @param overrides values set over the file's before it is read, by field path ({@code store.url}: command-line
     *                  options); they are checked like the file's
     * @throws io.slipstream.api.problem.InvalidInputException naming every problem
     */
    public static ServerConfig read(byte[] yaml, ServerConfig base, Map<String, String> overrides, Plugins plugins) {
        JsonNode tree = yaml == null ? Json.mapper().createObjectNode() : DocumentParser.parseOne(yaml);
        if (tree.isObject()) {
            overrides.forEach((path, value) -> set((ObjectNode) tree, path, value));
        }
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
        StoreSettings store = readStore(root, plugins, problems);

        String executorName = root.string("executor", false, 64);
        ExecutorFactory executor = plugins.executor(executorName == null ? DEFAULT_EXECUTOR : executorName);
        if (executor == null && executorName != null) {
            problems.add("executor", "'" + executorName + "' is not an executor of this build (available: " + plugins.executorNames() + ")");
            executor = plugins.executor(DEFAULT_EXECUTOR); // the rest is still checked, as the default executor reads it
        } else if (executor == null) {
            problems.add("executor", "is required: this build has no " + DEFAULT_EXECUTOR + " executor (available: " + plugins.executorNames() + ")");
        }
        String chosenName = executorName == null ? DEFAULT_EXECUTOR : executorName;
        ObjectNode executorView = Json.mapper().createObjectNode();
        Duration gracePeriod = base.limits().gracePeriod();
        Duration maxGracePeriod = base.limits().maxGracePeriod();
        Duration maxRuntime = base.limits().maxRuntime();
        Duration retention = base.limits().retention();
        FieldReader instances = root.object("instances", false);
        if (instances != null) {
            Duration grace = duration(instances, "gracePeriod", problems);
            gracePeriod = grace == null ? gracePeriod : grace;
            Duration maxGrace = duration(instances, "maxGracePeriod", problems);
            maxGracePeriod = maxGrace == null ? maxGracePeriod : maxGrace;
        }
        java.util.Set<String> seen = new java.util.HashSet<>();
        for (ExecutorFactory factory : plugins.executors()) {
            for (String field : factory.configFields()) {
                if (!seen.add(field)) {
                    continue;
                }
                boolean chosen = executor != null && executor.configFields().contains(field);
                if (field.startsWith("instances.")) {
                    String name = field.substring("instances.".length());
                    JsonNode value = instances == null ? null : instances.get(name);
                    if (value != null && chosen) {
                        if (!executorView.has("instances")) {
                            executorView.putObject("instances");
                        }
                        ((ObjectNode) executorView.get("instances")).set(name, value);
                    } else if (value != null) {
                        // Accepted before executors were plug-ins; said rather than silently ignored.
                        LOG.warn("{} is ignored: it is the {} executor's, and the executor is {}", field, factory.name(), chosenName);
                    }
                } else {
                    JsonNode value = root.get(field);
                    if (value != null && chosen) {
                        executorView.set(field, value);
                    } else if (value != null) {
                        problems.add(field, "is read only with executor: " + factory.name() + " (this config's executor is " + chosenName + ")");
                    }
                }
            }
        }
        if (instances != null) {
            instances.finish();
        }
        ExecutorSettings executorSettings = executor == null ? null : executor.read(FieldReader.of(executorView, "", problems));
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
        Duration leaderLease = base.leaderLease();
        FieldReader leadership = root.object("leadership", false);
        if (leadership != null) {
            Duration lease = duration(leadership, "lease", problems);
            if (lease != null && (lease.compareTo(Duration.ofSeconds(2)) < 0 || lease.compareTo(Duration.ofMinutes(5)) > 0)) {
                problems.add(leadership.pathOf("lease"), "must be between 2s and 5m (is " + Durations.format(lease) + ")");
            } else if (lease != null) {
                leaderLease = lease;
            }
            leadership.finish();
        }
        FairSharingPreemption fairSharing = base.fairSharingPreemption();
        FieldReader fairSharingBlock = root.object("fairSharing", false);
        if (fairSharingBlock != null) {
            FairSharingPreemption preemption = fairSharingBlock.enumValue("preemption", FairSharingPreemption.class, false);
            fairSharing = preemption == null ? fairSharing : preemption;
            fairSharingBlock.finish();
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
        String identityIssuer = base.identityIssuer();
        FieldReader identity = root.object("identity", false);
        if (identity != null) {
            identityIssuer = IdentityIssuer.check(identity.string("issuer", true, 512), identity.pathOf("issuer"), problems);
            identity.finish();
        }
        root.finish();
        if (gracePeriod.compareTo(maxGracePeriod) > 0) {
            problems.add("instances.gracePeriod", "must not be longer than instances.maxGracePeriod (" + Durations.format(maxGracePeriod) + ")");
        }
        problems.throwIfAny("the config file is invalid");
        return new ServerConfig(host, port, base.dataDir(), store, executorSettings,
                new RunLimits(gracePeriod, maxGracePeriod, maxRuntime, retention), base.tickInterval(), keys, leaderLease, fairSharing,
                identityIssuer);
    }

    /**
     * The {@code store:} block, read by the store it names: {@code type}, else the sub-protocol of its JDBC
     * {@code url} ({@code jdbc:postgresql:...}: {@code postgresql}); without a block, {@value #DEFAULT_STORE}.
     */
    private static StoreSettings readStore(FieldReader root, Plugins plugins, Problems problems) {
        FieldReader store = root.object("store", false);
        if (store == null) {
            return plugins.storeOf(DEFAULT_STORE).read(FieldReader.of(Json.mapper().createObjectNode(), "store", problems));
        }
        String type = store.string("type", false, 64);
        StoreFactory factory = null;
        if (type != null) {
            factory = plugins.store(type);
            if (factory == null) {
                problems.add(store.pathOf("type"), "'" + type + "' is not a store of this build (available: " + plugins.storeNames() + ")");
            }
        } else {
            JsonNode url = store.get("url");
            java.util.regex.Matcher jdbc = url != null && url.isString()
                    ? java.util.regex.Pattern.compile("jdbc:([a-z0-9]+):.*", java.util.regex.Pattern.DOTALL).matcher(url.asString()) : null;
            if (url == null) {
                problems.add(store.pathOf("url"), "is required (or store.type: one of " + plugins.storeNames() + ")");
            } else if (jdbc == null || !jdbc.matches()) {
                problems.add(store.pathOf("url"), "must be a JDBC URL of a store of this build (" + jdbcPrefixes(plugins) + ")");
            } else {
                factory = plugins.store(jdbc.group(1));
                if (factory == null) {
                    problems.add(store.pathOf("url"), "'jdbc:" + jdbc.group(1) + ":' is not a store of this build (available: "
                            + jdbcPrefixes(plugins) + ")");
                }
            }
        }
        return factory == null ? null : factory.read(store);
    }

    private static String jdbcPrefixes(Plugins plugins) {
        List<String> prefixes = new ArrayList<>();
        for (String name : plugins.storeNames().split(", ")) {
            prefixes.add("jdbc:" + name + ":");
        }
        return String.join(", ", prefixes);
    }

    /** Sets {@code a} or {@code a.b} to a string, over what the file says. */
    private static void set(ObjectNode tree, String path, String value) {
        int dot = path.indexOf('.');
        if (dot < 0) {
            tree.put(path, value);
            return;
        }
        String block = path.substring(0, dot);
        if (tree.get(block) == null || tree.get(block).isNull()) {
            tree.putObject(block);
        }
        if (tree.get(block).isObject()) {
            ((ObjectNode) tree.get(block)).put(path.substring(dot + 1), value);
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
}
