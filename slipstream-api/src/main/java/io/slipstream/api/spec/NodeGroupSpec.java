package io.slipstream.api.spec;

import com.fasterxml.jackson.annotation.JsonAnyGetter;
import com.fasterxml.jackson.annotation.JsonIgnore;

import com.fasterxml.jackson.annotation.JsonInclude;
import static java.util.Objects.requireNonNull;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * One group of identical instances of a job. Exactly one of {@code shape} and {@code resources} is given by the
 * user; in a run's effective spec the shape is resolved and both are set.
 *
 * @param limits              what one instance may use beyond {@code resources} ({@code limits.memory}), where the
 *                            executor allows it; {@code null}: its request is its limit
 * @param env                 plain environment variables: stored and shown as written (anyone who may read the job
 *                            sees them), so credentials belong in a Secret
 * @param workingDir relative to the instance's sandbox directory; {@code null} for the sandbox itself
 * @param maxRuntime          how long this group's instances may run, at most ({@code null}: as long as the run)
 * @param minSuccessReplicas  how many of its instances must succeed for the run to succeed ({@code null}: all); once
 *                            every group has that many, the rest are stopped and the run succeeds
 * @param startupProbe        when an instance is ready ({@code null}: as soon as it runs)
 * @param ports               how many network ports each instance is given (at least 1)
 * @param secretEnv           environment variables whose values come from Secrets of the job's workspace (written
 *                            in {@code env} as {@code {secretRef: secret/key}}); never in {@code env} as well
 * @param secrets             Secrets of the job's workspace given to the instances as files
 * @param placement           where its instances go relative to each other in the cluster's topology ({@code null}: anywhere)
 * @param minReplicas         the fewest instances it runs with: an elastic group runs with any count from this to
 *                            {@code replicas} (docs/elastic.md); {@code null}: {@code replicas}, a rigid group
 */
public record NodeGroupSpec(
        String name,
        int replicas,
        String shape,
        Resources resources,
        @JsonInclude(JsonInclude.Include.NON_NULL) Limits limits,
        List<String> command,
        @JsonProperty(access = JsonProperty.Access.WRITE_ONLY) Map<String, String> env,
        String image,
        String workingDir,
        Duration maxRuntime,
        Integer minSuccessReplicas,
        StartupProbe startupProbe,
        @JsonInclude(value = JsonInclude.Include.CUSTOM, valueFilter = NodeGroupSpec.OnePort.class) int ports,
        @JsonIgnore Map<String, SecretRef> secretEnv,
        @JsonInclude(JsonInclude.Include.NON_EMPTY) List<SecretMount> secrets,
        @JsonInclude(JsonInclude.Include.NON_NULL) PlacementSpec placement,
        @JsonInclude(JsonInclude.Include.NON_NULL) Integer minReplicas) {
    public NodeGroupSpec {
        requireNonNull(name, "name is null");
        command = List.copyOf(command);
        env = Map.copyOf(env);
        ports = Math.max(1, ports);
        secretEnv = secretEnv == null ? Map.of() : Map.copyOf(secretEnv);
        secrets = secrets == null ? List.of() : List.copyOf(secrets);
    }

    /** A rigid group. */
    public NodeGroupSpec(String name, int replicas, String shape, Resources resources, Limits limits, List<String> command, Map<String, String> env,
                         String image, String workingDir, Duration maxRuntime, Integer minSuccessReplicas, StartupProbe startupProbe, int ports,
                         Map<String, SecretRef> secretEnv, List<SecretMount> secrets, PlacementSpec placement) {
        this(name, replicas, shape, resources, limits, command, env, image, workingDir, maxRuntime, minSuccessReplicas, startupProbe, ports, secretEnv,
                secrets, placement, null);
    }

    /** A group placed anywhere. */
    public NodeGroupSpec(String name, int replicas, String shape, Resources resources, Limits limits, List<String> command, Map<String, String> env,
                         String image, String workingDir, Duration maxRuntime, Integer minSuccessReplicas, StartupProbe startupProbe, int ports,
                         Map<String, SecretRef> secretEnv, List<SecretMount> secrets) {
        this(name, replicas, shape, resources, limits, command, env, image, workingDir, maxRuntime, minSuccessReplicas, startupProbe, ports, secretEnv,
                secrets, null);
    }

    /** A group without secrets. */
    public NodeGroupSpec(String name, int replicas, String shape, Resources resources, List<String> command, Map<String, String> env,
                         String image, String workingDir, Duration maxRuntime, Integer minSuccessReplicas, StartupProbe startupProbe, int ports) {
        this(name, replicas, shape, resources, null, command, env, image, workingDir, maxRuntime, minSuccessReplicas, startupProbe, ports, Map.of(),
                List.of());
    }

    /** A group with the defaults for everything after {@code maxRuntime}. */
    public NodeGroupSpec(String name, int replicas, String shape, Resources resources, List<String> command, Map<String, String> env,
                         String image, String workingDir, Duration maxRuntime) {
        this(name, replicas, shape, resources, command, env, image, workingDir, maxRuntime, null, null, 1);
    }

    /**
     * The document form: {@code replicas} and {@code ports} default to 1, {@code env} holds both plain values and
     * {@code {secretRef: secret/key}} (split into {@code env} and {@code secretEnv}), {@code workingDir} is normalized.
     */
    @JsonCreator
    public static NodeGroupSpec of(@JsonProperty("name") String name, @JsonProperty("replicas") Integer replicas,
                                   @JsonProperty("shape") String shape, @JsonProperty("resources") Resources resources,
                                   @JsonProperty("limits") Limits limits, @JsonProperty("command") List<String> command,
                                   @JsonProperty("env") Map<String, Object> env,
                                   @JsonProperty("image") String image, @JsonProperty("workingDir") String workingDir,
                                   @JsonProperty("maxRuntime") Duration maxRuntime, @JsonProperty("minSuccessReplicas") Integer minSuccessReplicas,
                                   @JsonProperty("startupProbe") StartupProbe startupProbe, @JsonProperty("ports") Integer ports,
                                   @JsonProperty("secrets") List<SecretMount> secrets, @JsonProperty("placement") PlacementSpec placement,
                                   @JsonProperty("minReplicas") Integer minReplicas) {
        Map<String, String> plain = new java.util.LinkedHashMap<>();
        Map<String, SecretRef> fromSecrets = new java.util.LinkedHashMap<>();
        if (env != null) {
            env.forEach((key, value) -> {
                if (value instanceof Map<?, ?> ref && ref.get("secretRef") instanceof String text) {
                    fromSecrets.put(key, SecretRef.parse(text));
                } else if (value != null) {
                    plain.put(key, value.toString());
                }
            });
        }
        return new NodeGroupSpec(name, replicas == null ? 1 : replicas, shape, resources, limits, command == null ? List.of() : command, plain, image,
                sandboxRelative(workingDir), maxRuntime, minSuccessReplicas, startupProbe, ports == null ? 1 : ports, fromSecrets, secrets, placement,
                minReplicas);
    }

    /** {@code env} as written, when there is any: plain values and {@code {secretRef: secret/key}}, by name. */
    @JsonAnyGetter
    Map<String, Object> writtenEnv() {
        if (env.isEmpty() && secretEnv.isEmpty()) {
            return Map.of();
        }
        Map<String, Object> all = new java.util.TreeMap<>(env);
        secretEnv.forEach((key, ref) -> all.put(key, Map.of("secretRef", ref.toString())));
        return Map.of("env", all);
    }

    /** For writing: one port, the default, is left out. */
    static final class OnePort {
        @Override
        public boolean equals(Object value) {
            return Integer.valueOf(1).equals(value);
        }

        @Override
        public int hashCode() {
            return 0;
        }
    }

    public NodeGroupSpec withResources(Resources resolved) {
        return new NodeGroupSpec(name, replicas, shape, resolved, limits, command, env, image, workingDir, maxRuntime, minSuccessReplicas,
                startupProbe, ports, secretEnv, secrets, placement, minReplicas);
    }

    /** Sized by {@code resolved} instead of a shape. */
    public NodeGroupSpec withResourcesInsteadOfShape(Resources resolved) {
        return new NodeGroupSpec(name, replicas, null, resolved, limits, command, env, image, workingDir, maxRuntime, minSuccessReplicas,
                startupProbe, ports, secretEnv, secrets, placement, minReplicas);
    }

    /** The same group with these limits ({@code null}: none). */
    public NodeGroupSpec withLimits(Limits newLimits) {
        return new NodeGroupSpec(name, replicas, shape, resources, newLimits, command, env, image, workingDir, maxRuntime, minSuccessReplicas,
                startupProbe, ports, secretEnv, secrets, placement, minReplicas);
    }

    /** The same group with this minimum ({@code null}: rigid). */
    public NodeGroupSpec withMinReplicas(Integer newMinReplicas) {
        return new NodeGroupSpec(name, replicas, shape, resources, limits, command, env, image, workingDir, maxRuntime, minSuccessReplicas,
                startupProbe, ports, secretEnv, secrets, placement, newMinReplicas);
    }

    /**
     * The most memory one instance may use: {@code limits.memory} where given, else its memory request; 0 while it has
     * neither (a shape not resolved yet).
     */
    public long memoryLimitBytes() {
        if (limits != null && limits.memoryBytes() != null) {
            return limits.memoryBytes();
        }
        return resources == null ? 0 : resources.memoryBytes();
    }

    /** Whether its instances may use more memory than they asked for ({@code limits.memory} above the request). */
    public boolean burstsMemory() {
        return resources != null && memoryLimitBytes() > resources.memoryBytes();
    }

    /**
     * Why {@code limits.memory} is below the memory request (its shape's, where it names one and it is resolved), or
     * {@code null}. A document's {@code resources} are checked as it is read; a shape's only once it is resolved (when
     * the job is applied, and when a run is made: the shape may have changed since).
     */
    public String memoryLimitProblem() {
        if (limits == null || limits.memoryBytes() == null || resources == null) {
            return null;
        }
        String problem = Limits.memoryProblem(limits.memoryBytes(), resources.memoryBytes());
        return problem == null || shape == null ? problem : problem + " of shape '" + shape + "'";
    }

    /** How many instances must succeed: {@code minSuccessReplicas}, or all. */
    public int requiredSuccesses() {
        return minSuccessReplicas == null ? replicas : minSuccessReplicas;
    }

    /** Whether it may run with fewer instances than its replicas (docs/elastic.md). */
    public boolean elastic() {
        return minReplicas != null && minReplicas < replicas;
    }

    /** The fewest instances it runs with: {@code minReplicas}, or all. */
    public int minimum() {
        return minReplicas == null ? replicas : minReplicas;
    }

    /** Whether its instances get anything from a Secret. */
    public boolean usesSecrets() {
        return !secretEnv.isEmpty() || !secrets.isEmpty();
    }

    /** A working directory normalized; {@code "."} (normalized to nothing) is the sandbox itself: absent. */
    private static String sandboxRelative(String workingDir) {
        String normalized = SecretMount.normalized(workingDir);
        return normalized == null || normalized.isEmpty() ? null : normalized;
    }
}
