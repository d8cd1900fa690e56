package io.slipstream.executor.local;

import io.slipstream.api.problem.Problems;
import io.slipstream.api.spec.FieldReader;
import io.slipstream.api.spec.Resources;
import io.slipstream.executor.ConfigValues;
import io.slipstream.executor.Executor;
import io.slipstream.executor.ExecutorContext;
import io.slipstream.executor.ExecutorFactory;
import io.slipstream.executor.ExecutorSettings;
import io.slipstream.executor.NodeDeclarations;
import io.slipstream.executor.NodeInfo;
import io.slipstream.executor.local.cgroup.Cgroups;
import io.slipstream.executor.local.image.ImageSettings;
import io.slipstream.executor.local.process.ProcFs;
import io.slipstream.executor.local.process.SupervisorProgram;
import io.slipstream.executor.local.uid.Isolation;
import io.slipstream.executor.local.uid.UidLeftovers;
import io.slipstream.executor.local.uid.UidRangeClaims;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import tools.jackson.databind.JsonNode;

/**
 * {@code executor: local} (the default): every instance an OS process on this machine, over the nodes of
 * {@code nodes:}, under a uid of its run's own when the server can ({@code instances.isolation}).
 */
public final class LocalExecutorFactory implements ExecutorFactory {
    private static final Logger LOG = LoggerFactory.getLogger(LocalExecutorFactory.class);
    private static final Pattern UID_RANGE = Pattern.compile("(\\d{4,10})-(\\d{4,10})");

    private final Supplier<NodeInfo> machine;

    /** The factory {@link java.util.ServiceLoader} makes: {@code nodes: auto} describes this machine. */
    public LocalExecutorFactory() {
        this(MachineNode::detect);
    }

    /** @param machine describes this machine, for {@code nodes: auto} (tests need no nvidia-smi) */
    public LocalExecutorFactory(Supplier<NodeInfo> machine) {
        this.machine = machine;
    }

    @Override
    public String name() {
        return LocalExecutorSettings.NAME;
    }

    @Override
    public Set<String> configFields() {
        return Set.of("nodes", "instances.inheritEnv", "instances.isolation", "instances.uidRange", "instances.uidClaims",
                "instances.logLimit", "instances.maxProcessesPerRun", "instances.imageRetention", "instances.imagePullTimeout",
                "instances.launcher", "instances.cgroups", "instances.burstableMemory");
    }

    @Override
    public LocalExecutorSettings read(FieldReader config) {
        Problems problems = config.problems();
        LocalExecutorSettings settings = LocalExecutorSettings.defaults();
        settings = settings.withNodes(readNodes(config, settings.nodes(), problems));
        FieldReader instances = config.object("instances", false);
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
                settings = settings.withInheritEnv(list);
            }
            Isolation.Mode mode = instances.enumValue("isolation", Isolation.Mode.class, false);
            settings = mode == null ? settings : settings.withIsolation(mode);
            UidRangeClaims.Range range = readUidRange(instances, problems);
            settings = range == null ? settings : settings.withUidRange(range);
            Path claims = ConfigValues.absolutePath(instances, "uidClaims");
            settings = claims == null ? settings : settings.withUidClaims(claims);
            Long logLimit = ConfigValues.size(instances, "logLimit");
            settings = logLimit == null ? settings : settings.withLogLimit(logLimit);
            Long processes = instances.integer("maxProcessesPerRun", false, 64, 4_194_304);
            settings = processes == null ? settings : settings.withMaxProcessesPerRun(processes.intValue());
            settings = settings.withImages(readImages(instances, settings.images()));
            SupervisorProgram.Mode launcher = instances.enumValue("launcher", SupervisorProgram.Mode.class, false);
            settings = launcher == null ? settings : settings.withLauncher(launcher);
            Cgroups.Mode cgroups = instances.enumValue("cgroups", Cgroups.Mode.class, false);
            settings = cgroups == null ? settings : settings.withCgroups(cgroups);
            Boolean burstable = instances.bool("burstableMemory", false);
            settings = burstable == null ? settings : settings.withBurstableMemory(burstable);
            instances.finish();
        }
        return settings;
    }

    /** {@code imageRetention} (at least an hour) and {@code imagePullTimeout} (10s to 6h), each named when wrong. */
    private static ImageSettings readImages(FieldReader instances, ImageSettings defaults) {
        java.time.Duration retention = ConfigValues.duration(instances, "imageRetention");
        java.time.Duration pull = ConfigValues.duration(instances, "imagePullTimeout");
        if (retention != null && retention.compareTo(ImageSettings.MIN_RETENTION) < 0) {
            instances.problems().add(instances.pathOf("imageRetention"), "must be at least 1h");
            retention = null;
        }
        if (pull != null && (pull.compareTo(java.time.Duration.ofSeconds(10)) < 0 || pull.compareTo(java.time.Duration.ofHours(6)) > 0)) {
            instances.problems().add(instances.pathOf("imagePullTimeout"), "must be between 10s and 6h");
            pull = null;
        }
        return new ImageSettings(retention == null ? defaults.retention() : retention, pull == null ? defaults.pullTimeout() : pull);
    }

    @Override
    public Executor create(ExecutorSettings settings, ExecutorContext context) {
        LocalExecutorSettings local = (LocalExecutorSettings) settings;
        Path dataDir = context.dataDir();
        Isolation isolation = isolation(local, dataDir);
        Path instances = dataDir.resolve("instances");
        Cgroups cgroups = Cgroups.detect(local.cgroups(), ProcFs.runningAsRoot(), instances);
        String enforcement = cgroups.enforcement().describe();
        if (cgroups.enforcement().enforced().isEmpty()) {
            LOG.warn("instances are not held to what they were given: {}", enforcement);
        } else {
            LOG.info("instances are held to what they were given: {}", enforcement);
        }
        if (!ProcFs.setOwnOomScoreAdj(InstanceStart.SERVER_OOM_SCORE_ADJ)) {
            LOG.warn("the server cannot lower its OOM score (that needs root with CAP_SYS_RESOURCE): instances rank above it for the"
                    + " OOM killer, but their uids may lower theirs to the server's");
        }
        return new LocalProcessExecutor(instances, local.nodes(), local.inheritEnv(), isolation, context.instanceTools().orElse(null),
                local.logLimit(), local.maxProcessesPerRun(), context.clock(), UidLeftovers.SHARED_PLACES,
                local.images(), local.launcher(), cgroups, local.burstableMemory());
    }

    /**
     * Instances run under uids of their own when they can; otherwise they could read the store and the admin token,
     * which is said loudly (or, with {@code isolation: on}, refused).
     */
    static Isolation isolation(LocalExecutorSettings settings, Path dataDir) {
        Isolation.Mode mode = settings.isolation();
        if (mode == Isolation.Mode.off) {
            LOG.warn("instance isolation is off: every job runs as this server's user and can read its data directory");
            return Isolation.off();
        }
        String obstacle = Isolation.obstacle(dataDir);
        if (obstacle != null) {
            if (mode == Isolation.Mode.on) {
                throw new IllegalStateException("instances cannot be isolated: " + obstacle);
            }
            LOG.warn("instances run as this server's user and can read its data directory, the admin token included, because {}",
                    obstacle);
            return Isolation.off();
        }
        allowPassingThrough(dataDir); // instances' uids reach their directories through it, and see nothing else
        Isolation isolation = UidRangeClaims.claim(settings.uidClaims(), dataDir, settings.uidRange());
        LOG.info("instances run under uids of their own, from the range {}-{} this server holds ({})", isolation.firstUid(),
                isolation.firstUid() + isolation.uidCount() - 1, settings.uidClaims());
        return isolation;
    }

    private static void allowPassingThrough(Path dir) {
        try {
            var permissions = Files.getPosixFilePermissions(dir);
            permissions.add(PosixFilePermission.GROUP_EXECUTE);
            permissions.add(PosixFilePermission.OTHERS_EXECUTE);
            Files.setPosixFilePermissions(dir, permissions);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot open " + dir + " for passing through", e);
        }
    }

    /** {@code uidRange: "200000-265535"}, or null if absent or wrong (the problem is recorded). */
    /** Its uid range's claim, in the default claims directory (a demo's data directory uses the defaults). */
    @Override
    public void forget(Path dataDir) {
        UidRangeClaims.release(Path.of(UidRangeClaims.DEFAULT_DIRECTORY), dataDir);
    }

    private static UidRangeClaims.Range readUidRange(FieldReader instances, Problems problems) {
        String range = instances.string("uidRange", false, 32);
        if (range == null) {
            return null;
        }
        Matcher m = UID_RANGE.matcher(range);
        long from = m.matches() ? Long.parseLong(m.group(1)) : -1;
        long to = m.matches() ? Long.parseLong(m.group(2)) : -1;
        if (from < 1000 || to < from || to >= Integer.MAX_VALUE) {
            problems.add(instances.pathOf("uidRange"), "must be FIRST-LAST with 1000 <= FIRST <= LAST, e.g. 200000-265535");
            return null;
        }
        return new UidRangeClaims.Range((int) from, (int) (to - from + 1));
    }

    private List<NodeInfo> readNodes(FieldReader config, List<NodeInfo> fallback, Problems problems) {
        JsonNode value = config.get("nodes");
        if (value == null) {
            return fallback;
        }
        if (value.isString() && value.asString().equals("auto")) {
            return List.of(machine.get());
        }
        if (!value.isArray()) {
            problems.add(config.pathOf("nodes"), "must be 'auto' or a list of node declarations");
            return fallback;
        }
        Map<String, String> gpusDeclared = new HashMap<>(); // device number -> where it was declared first
        List<NodeInfo> nodes = NodeDeclarations.read(config, "nodes", (node, capacity, count) -> {
            List<String> gpuDevices = readGpuDevices(node, capacity, problems);
            String cpuset = readCpuset(node, capacity, problems);
            if (!gpuDevices.isEmpty() && count != null && count > 1) {
                problems.add(node.pathOf("gpuDevices"), "cannot be given to the " + count + " nodes of a namePrefix: each GPU is one node's;"
                        + " declare the nodes one by one, each with its own devices");
            }
            declareOnce(gpuDevices, node.pathOf("gpuDevices"), gpusDeclared, problems);
            return declared -> new NodeInfo(declared.name(), declared.capacity(), null, declared.labels(), gpuDevices, cpuset);
        });
        return nodes == null ? fallback : nodes;
    }

    private static void declareOnce(List<String> gpuDevices, String field, Map<String, String> declared, Problems problems) {
        for (int i = 0; i < gpuDevices.size(); i++) {
            String number;
            try {
                number = io.slipstream.executor.local.cgroup.CgroupLimits.deviceOf(Path.of(gpuDevices.get(i)));
            } catch (IOException e) {
                continue; // said by readGpuDevices
            }
            String here = field + "[" + i + "]";
            String first = declared.putIfAbsent(number, here);
            if (first != null) {
                problems.add(here, "names the device " + number + " that " + first + " declares already: each GPU is one node's");
            }
        }
    }

    /**
     * {@code gpuDevices: [/dev/nvidia0, ...]}: the device node of each GPU, in index order, so that an instance can open
     * its own GPUs and no other (docs/security.md); each must be a device node, one per GPU.
     */
    private static List<String> readGpuDevices(FieldReader node, Resources capacity, Problems problems) {
        List<JsonNode> items = node.array("gpuDevices", false, 1024);
        if (items == null) {
            return List.of();
        }
        List<String> devices = new ArrayList<>();
        for (int i = 0; i < items.size(); i++) {
            String field = node.pathOf("gpuDevices") + "[" + i + "]";
            String path = items.get(i).isString() ? items.get(i).asString() : "";
            if (!path.startsWith("/") || path.length() > 4096 || path.contains(":") || path.contains("\n")) {
                problems.add(field, "must be the absolute path of a device node, e.g. /dev/nvidia0 (without a colon)");
                continue;
            }
            try {
                io.slipstream.executor.local.cgroup.CgroupLimits.deviceOf(Path.of(path));
            } catch (IOException | RuntimeException e) {
                problems.add(field, "must be a device node: " + e.getMessage());
                continue;
            }
            if (devices.contains(path)) {
                problems.add(field, "names " + path + " twice");
                continue;
            }
            devices.add(path);
        }
        if (capacity != null && devices.size() == items.size() && devices.size() != capacity.gpu()) {
            problems.add(node.pathOf("gpuDevices"), "must name one device per GPU: the node has " + capacity.gpu() + ", not " + devices.size());
        }
        return devices.size() == items.size() && capacity != null && devices.size() == capacity.gpu() ? devices : List.of();
    }

    /**
     * {@code cpuset: "2-15"}: the cores the node's instances are pinned to (where cgroups pin them), each one this server
     * may run on, and enough of them for the node's {@code cpu}: a machine split into nodes, or cores kept for the server.
     */
    private static String readCpuset(FieldReader node, Resources capacity, Problems problems) {
        String text = node.string("cpuset", false, 4096);
        if (text == null) {
            return null;
        }
        io.slipstream.executor.local.cgroup.CpuList cores;
        try {
            cores = io.slipstream.executor.local.cgroup.CpuList.parse(text);
        } catch (IllegalArgumentException e) {
            problems.add(node.pathOf("cpuset"), e.getMessage());
            return null;
        }
        java.util.Optional<String> allowed = io.slipstream.executor.local.process.ProcFs.allowedCores();
        if (allowed.isPresent()) {
            io.slipstream.executor.local.cgroup.CpuList machine = io.slipstream.executor.local.cgroup.CpuList.parse(allowed.get());
            if (!cores.within(machine)) {
                problems.add(node.pathOf("cpuset"), "names cores " + cores.without(machine) + ", which this machine does not have or does not let"
                        + " the server run on (it may use " + machine + ")");
                return null;
            }
        }
        if (capacity != null && capacity.milliCpu() > cores.count() * 1000L) {
            problems.add(node.pathOf("cpu"), "is more than the " + cores.count() + " core(s) of its cpuset (" + cores + ") can give");
        }
        return cores.toString();
    }
}
