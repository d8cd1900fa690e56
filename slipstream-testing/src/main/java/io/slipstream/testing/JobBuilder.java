package io.slipstream.testing;

import io.slipstream.api.spec.Document;
import io.slipstream.api.spec.JobSpec;
import io.slipstream.api.spec.NodeGroupSpec;
import io.slipstream.api.spec.ObjectMeta;
import io.slipstream.api.spec.Resources;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Fluent builder of Job documents for tests: {@code aJob("train").workspace("team-a").gpus(8).replicas(4)}. */
public final class JobBuilder {
    private final String name;
    private String workspace = "team-a";
    private int priority;
    private String quota;
    private io.slipstream.api.spec.IdleMode idleMode;
    private java.time.Duration maxRuntime;
    private java.time.Duration preemptionGracePeriod;
    private boolean maxRuntimePerAttempt;
    private io.slipstream.api.spec.ScheduleSpec schedule;
    private io.slipstream.api.spec.StartupOrder startupOrder;
    private io.slipstream.api.spec.FaultTolerance faultTolerance;
    private Integer minReplicas;
    private io.slipstream.api.spec.NetworkMode network;
    private io.slipstream.api.spec.IdentitySpec identity;
    private final List<io.slipstream.api.spec.StorageSpec> storage = new ArrayList<>();
    private Integer minSuccessReplicas;
    private io.slipstream.api.spec.StartupProbe startupProbe;
    private java.time.Duration groupMaxRuntime;
    private Long memoryLimitBytes;
    private final List<NodeGroupSpec> groups = new ArrayList<>();
    private String groupName = "main";
    private int replicas = 1;
    private long milliCpu = 1000;
    private long memoryBytes = 1L << 30;
    private int gpu;
    private String gpuModel;
    private List<String> command = List.of("true");
    private String image;
    private final Map<String, String> env = new LinkedHashMap<>();

    private JobBuilder(String name) {
        this.name = name;
    }

    public static JobBuilder aJob(String name) {
        return new JobBuilder(name);
    }

    public JobBuilder workspace(String workspace) {
        this.workspace = workspace;
        return this;
    }

    public JobBuilder priority(int priority) {
        this.priority = priority;
        return this;
    }

    public JobBuilder quota(String quota) {
        this.quota = quota;
        return this;
    }

    public JobBuilder idle(io.slipstream.api.spec.IdleMode mode) {
        this.idleMode = mode;
        return this;
    }

    /** Identity tokens for these audiences, each valid for {@code ttl}. */
    public JobBuilder identity(java.time.Duration ttl, String... audiences) {
        this.identity = new io.slipstream.api.spec.IdentitySpec(List.of(audiences), ttl);
        return this;
    }

    public JobBuilder network(io.slipstream.api.spec.NetworkMode network) {
        this.network = network;
        return this;
    }

    public JobBuilder faultTolerance(io.slipstream.api.spec.FaultTolerance policy) {
        this.faultTolerance = policy;
        return this;
    }

    /** How long a preempted run's instances have between the stop signal and the kill. */
    public JobBuilder preemptionGrace(java.time.Duration grace) {
        this.preemptionGracePeriod = grace;
        return this;
    }

    public JobBuilder maxRuntime(java.time.Duration maxRuntime) {
        this.maxRuntime = maxRuntime;
        return this;
    }

    /** The run's limit counts each attempt on its own, not the total over restarts. */
    public JobBuilder maxRuntimePerAttempt() {
        this.maxRuntimePerAttempt = true;
        return this;
    }

    /** The current node group's own runtime limit. */
    public JobBuilder groupMaxRuntime(java.time.Duration limit) {
        this.groupMaxRuntime = limit;
        return this;
    }

    /** Runs on a schedule: {@code cron} in {@code timeZone}, with the given policy and no starting deadline. */
    public JobBuilder schedule(String cron, String timeZone, io.slipstream.api.spec.ConcurrencyPolicy policy) {
        return schedule(new io.slipstream.api.spec.ScheduleSpec(cron, java.time.ZoneId.of(timeZone), policy, null, false));
    }

    public JobBuilder schedule(io.slipstream.api.spec.ScheduleSpec schedule) {
        this.schedule = schedule;
        return this;
    }

    public JobBuilder inOrder() {
        this.startupOrder = io.slipstream.api.spec.StartupOrder.InOrder;
        return this;
    }

    public JobBuilder storage(String storageName, io.slipstream.api.spec.StorageScope scope) {
        storage.add(new io.slipstream.api.spec.StorageSpec(storageName, scope, null, null));
        return this;
    }

    /** The current node group's minSuccessReplicas. */
    public JobBuilder minSuccess(int count) {
        this.minSuccessReplicas = count;
        return this;
    }

    /** The current node group's minReplicas: elastic, from this many instances to its replicas. */
    public JobBuilder minReplicas(int count) {
        this.minReplicas = count;
        return this;
    }

    /** The current node group's startup probe, checked every second. */
    public JobBuilder probe(String... probeCommand) {
        this.startupProbe = new io.slipstream.api.spec.StartupProbe(List.of(probeCommand), 1, 3, 0);
        return this;
    }

    public JobBuilder group(String groupName) {
        this.groupName = groupName;
        return this;
    }

    public JobBuilder replicas(int replicas) {
        this.replicas = replicas;
        return this;
    }

    public JobBuilder cpu(double cores) {
        this.milliCpu = Math.round(cores * 1000);
        return this;
    }

    public JobBuilder memoryGi(long gibibytes) {
        this.memoryBytes = gibibytes << 30;
        return this;
    }

    /** The current node group's {@code limits.memory}. */
    public JobBuilder memoryLimitGi(long gibibytes) {
        this.memoryLimitBytes = gibibytes << 30;
        return this;
    }

    public JobBuilder gpus(int gpu) {
        this.gpu = gpu;
        return this;
    }

    public JobBuilder gpuModel(String gpuModel) {
        this.gpuModel = gpuModel;
        return this;
    }

    public JobBuilder command(String... command) {
        this.command = List.of(command);
        return this;
    }

    /** The current node group's container image (executors that run containers require one). */
    public JobBuilder image(String containerImage) {
        this.image = containerImage;
        return this;
    }

    public JobBuilder env(String key, String value) {
        env.put(key, value);
        return this;
    }

    /** Closes the node group described so far and starts describing another one. */
    public JobBuilder andGroup(String nextGroupName) {
        groups.add(currentGroup());
        groupName = nextGroupName;
        env.clear();
        groupMaxRuntime = null;
        minSuccessReplicas = null;
        minReplicas = null;
        startupProbe = null;
        memoryLimitBytes = null;
        return this;
    }

    private NodeGroupSpec currentGroup() {
        return new NodeGroupSpec(groupName, replicas, null, new Resources(milliCpu, memoryBytes, gpu, gpuModel), command, env, image, null, groupMaxRuntime,
                minSuccessReplicas, startupProbe, 1).withLimits(memoryLimitBytes == null ? null : new io.slipstream.api.spec.Limits(memoryLimitBytes))
                .withMinReplicas(minReplicas);
    }

    public JobSpec spec() {
        List<NodeGroupSpec> all = new ArrayList<>(groups);
        all.add(currentGroup());
        return new JobSpec(priority, quota, idleMode, preemptionGracePeriod, maxRuntime, maxRuntimePerAttempt, schedule, startupOrder, storage, faultTolerance, all, network, identity);
    }

    public Document<JobSpec> build() {
        return new Document<>(ObjectMeta.of(name, workspace), spec());
    }
}
