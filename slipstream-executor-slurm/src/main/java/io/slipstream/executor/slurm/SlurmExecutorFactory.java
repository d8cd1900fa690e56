package io.slipstream.executor.slurm;

import io.slipstream.api.spec.FieldReader;
import io.slipstream.executor.ConfigValues;
import io.slipstream.executor.Executor;
import io.slipstream.executor.ExecutorContext;
import io.slipstream.executor.ExecutorFactory;
import io.slipstream.executor.ExecutorSettings;
import io.slipstream.executor.ResourceEnforcement;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import tools.jackson.databind.JsonNode;

/**
 * {@code executor: slurm}: every instance a Slurm batch job on the nodes of a partition reserved for Slipstream, its
 * files on the cluster's shared file system; configured in the {@code slurm:} block (docs/slurm.md).
 */
public final class SlurmExecutorFactory implements ExecutorFactory {
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(SlurmExecutorFactory.class);
    private static final Pattern PORTS = Pattern.compile("(\\d{1,5})-(\\d{1,5})");
    /** Slurm's names of partitions, QOS and accounts: no spaces, commas or quotes (they would change sbatch's options). */
    private static final Pattern SLURM_NAME = Pattern.compile("[A-Za-z0-9_.-]{1,64}");

    /** Whether the server runs as root (then {@code slurm.allowRootJobs} must be set). */
    private final java.util.function.BooleanSupplier root;

    public SlurmExecutorFactory() {
        this(SlurmSettings::runningAsRoot);
    }

    SlurmExecutorFactory(java.util.function.BooleanSupplier root) {
        this.root = root;
    }

    @Override
    public String name() {
        return SlurmSettings.NAME;
    }

    @Override
    public Set<String> configFields() {
        return Set.of("slurm");
    }

    @Override
    public SlurmSettings read(FieldReader config) {
        FieldReader slurm = config.object("slurm", false);
        if (slurm == null) {
            config.problems().add(config.pathOf("slurm") + ".sharedDirectory", "is required: a directory every node of the partition sees at the"
                    + " same path (docs/slurm.md)");
            return null;
        }
        Path shared = ConfigValues.absolutePath(slurm, "sharedDirectory");
        if (shared == null && !slurm.has("sharedDirectory")) {
            slurm.problems().add(slurm.pathOf("sharedDirectory"), "is required: a directory every node of the partition sees at the same path");
        } else if (shared != null && (shared.toString().contains("%") || shared.toString().contains("\\"))) {
            slurm.problems().add(slurm.pathOf("sharedDirectory"), "must hold neither '%' nor '\\' (sbatch reads them in output paths)");
            shared = null;
        }
        SlurmSettings settings = SlurmSettings.defaults(shared == null ? Path.of("/") : shared);
        String partition = slurmName(slurm, "partition");
        settings = partition == null ? settings : settings.withPartition(partition);
        String qos = slurmName(slurm, "qos");
        settings = qos == null ? settings : settings.withQos(qos);
        String account = slurmName(slurm, "account");
        settings = account == null ? settings : settings.withAccount(account);
        Path conf = ConfigValues.absolutePath(slurm, "slurmConf");
        settings = conf == null ? settings : settings.withSlurmConf(conf);
        Path commands = ConfigValues.absolutePath(slurm, "commands");
        settings = commands == null ? settings : settings.withCommands(commands);
        Duration commandTimeout = ConfigValues.duration(slurm, "commandTimeout");
        if (commandTimeout != null && (commandTimeout.compareTo(Duration.ofSeconds(1)) < 0 || commandTimeout.compareTo(SlurmSettings.MAX_COMMAND_TIMEOUT) > 0)) {
            slurm.problems().add(slurm.pathOf("commandTimeout"), "must be between 1s and 15s: a launch holds the leader fence while sbatch runs, and"
                    + " a new leader waits at most 20s for it");
            commandTimeout = null;
        }
        settings = commandTimeout == null ? settings : settings.withCommandTimeout(commandTimeout);
        Duration poll = duration(slurm, "pollInterval", Duration.ofMillis(100), Duration.ofMinutes(5));
        settings = poll == null ? settings : settings.withPollInterval(poll);
        Duration refresh = duration(slurm, "nodeRefresh", Duration.ofSeconds(1), Duration.ofHours(1));
        settings = refresh == null ? settings : settings.withNodeRefresh(refresh);
        Duration start = duration(slurm, "startTimeout", Duration.ofSeconds(10), Duration.ofDays(7));
        settings = start == null ? settings : settings.withStartTimeout(start);
        settings = readPorts(slurm, settings);
        String model = slurm.string("gpuModel", false, 128);
        if (model != null && SlurmNode.modelName(model).isEmpty()) {
            slurm.problems().add(slurm.pathOf("gpuModel"), "must hold a letter or digit");
        } else if (model != null) {
            settings = settings.withGpuModel(SlurmNode.modelName(model));
        }
        String prefix = slurm.string("jobNamePrefix", false, 32);
        if (prefix != null && !SlurmSettings.PREFIX.matcher(prefix).matches()) {
            slurm.problems().add(slurm.pathOf("jobNamePrefix"), "must be lower-case letters, digits and '-', starting with a letter or digit");
        } else if (prefix != null) {
            settings = settings.withJobNamePrefix(prefix);
        }
        List<String> inherit = readInheritEnv(slurm);
        settings = inherit == null ? settings : settings.withInheritEnv(inherit);
        Boolean trusted = slurm.bool("trustedTenants", false);
        Boolean rootJobs = slurm.bool("allowRootJobs", false);
        settings = settings.withTrustedTenants(Boolean.TRUE.equals(trusted)).withAllowRootJobs(Boolean.TRUE.equals(rootJobs))
                .withUsers(readUsers(slurm));
        String defaultUser = slurm.string("defaultUser", false, 32);
        if (defaultUser != null && !SlurmSettings.USER.matcher(defaultUser).matches()) {
            slurm.problems().add(slurm.pathOf("defaultUser"), "must be a Unix user name: lower-case letters, digits, '_' and '-' (is '"
                    + defaultUser + "')");
        } else if (defaultUser != null) {
            settings = settings.withDefaultUser(defaultUser);
        }
        SlurmSettings.Refusal refusal = settings.startRefusal(root.getAsBoolean());
        if (refusal != null) {
            slurm.problems().add(slurm.pathOf(refusal.field()), refusal.why());
        }
        slurm.finish();
        return shared == null ? null : settings;
    }

    private static String slurmName(FieldReader slurm, String field) {
        String name = slurm.string(field, false, 64);
        if (name != null && !SLURM_NAME.matcher(name).matches()) {
            slurm.problems().add(slurm.pathOf(field), "must be a Slurm name: letters, digits, '_', '.' and '-' (is '" + name + "')");
            return null;
        }
        return name;
    }

    private static Duration duration(FieldReader slurm, String field, Duration min, Duration max) {
        Duration duration = ConfigValues.duration(slurm, field);
        if (duration != null && (duration.compareTo(min) < 0 || duration.compareTo(max) > 0)) {
            slurm.problems().add(slurm.pathOf(field), "must be between " + io.slipstream.api.spec.Durations.format(min) + " and "
                    + io.slipstream.api.spec.Durations.format(max));
            return null;
        }
        return duration;
    }

    /** {@code ports: 30000-39999}: at least 1024, at most 65535. */
    private static SlurmSettings readPorts(FieldReader slurm, SlurmSettings settings) {
        String text = slurm.string("ports", false, 16);
        if (text == null) {
            return settings;
        }
        Matcher range = PORTS.matcher(text);
        if (range.matches()) {
            int first = Integer.parseInt(range.group(1));
            int last = Integer.parseInt(range.group(2));
            if (first >= 1024 && last <= 65_535 && first <= last) {
                return settings.withPorts(first, last);
            }
        }
        slurm.problems().add(slurm.pathOf("ports"), "must be a range of ports such as 30000-39999, within 1024-65535 (is '" + text + "')");
        return settings;
    }

    /** {@code users: {<workspace>: <Unix user>}}: whether the users exist is checked when the executor starts. */
    private static java.util.Map<String, String> readUsers(FieldReader slurm) {
        List<java.util.Map.Entry<String, JsonNode>> entries = slurm.entries("users", false, 10_000);
        if (entries == null) {
            return java.util.Map.of();
        }
        java.util.Map<String, String> users = new java.util.LinkedHashMap<>();
        for (java.util.Map.Entry<String, JsonNode> entry : entries) {
            String at = slurm.pathOf("users") + "." + entry.getKey();
            if (io.slipstream.api.spec.Names.dnsLabelProblem(entry.getKey()) != null) {
                slurm.problems().add(at, "is not a workspace name (a DNS label: lower-case letters, digits and '-')");
            } else if (!entry.getValue().isString() || !SlurmSettings.USER.matcher(entry.getValue().asString()).matches()) {
                slurm.problems().add(at, "must be a Unix user name: lower-case letters, digits, '_' and '-' (is "
                        + FieldReader.describe(entry.getValue()) + ")");
            } else {
                users.put(entry.getKey(), entry.getValue().asString());
            }
        }
        return users;
    }

    private static List<String> readInheritEnv(FieldReader slurm) {
        List<JsonNode> names = slurm.array("inheritEnv", false, 256);
        if (names == null) {
            return null;
        }
        List<String> list = new ArrayList<>();
        for (int i = 0; i < names.size(); i++) {
            if (!names.get(i).isString() || !names.get(i).asString().matches("[A-Za-z_][A-Za-z0-9_]*")) {
                slurm.problems().add(slurm.pathOf("inheritEnv") + "[" + i + "]", "must be an environment variable name");
            } else {
                list.add(names.get(i).asString());
            }
        }
        return list;
    }

    /** Connects to Slurm (its nodes, its configuration) and says what Slurm holds instances to. */
    @Override
    public Executor create(ExecutorSettings settings, ExecutorContext context) {
        SlurmExecutor executor = new SlurmExecutor((SlurmSettings) settings, context.dataDir().resolve("slurm"), context.clock());
        ResourceEnforcement enforcement = executor.enforcement();
        if (enforcement != null && enforcement.enforced().isEmpty()) {
            LOG.warn("instances are not held to what they were given: {}", enforcement.summary());
        } else if (enforcement != null) {
            LOG.info("instances are held to what they were given: {}", enforcement.summary());
        }
        return executor;
    }
}
