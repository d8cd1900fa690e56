package io.slipstream.executor;

import static java.util.Objects.requireNonNull;

import io.slipstream.api.run.InstanceId;
import io.slipstream.api.spec.SecretValue;
import java.util.List;
import java.util.Map;

/**
 * Everything an executor needs to start one instance, decided and persisted by the control plane beforehand.
 *
 * @param env         the complete environment the control plane wants the instance to see (its spec's env and the
 *                    {@code SLIPSTREAM_*} variables); executors add only what is theirs to know (GPU visibility).
 *                    {@code SLIPSTREAM_RUN_TOKEN} is a credential: an executor that writes specs where others read
 *                    them keeps it in its secret store (Kubernetes: a Secret), and it never goes to a log
 * @param workingDir  relative to the instance's own directory, or {@code null}
 * @param metadata    the run as the instance sees it, written to {@code SLIPSTREAM_METADATA_FILE} before it starts; the
 *                    executor fills in where the storage is; {@code null} for none
 * @param probe       tells when the instance is ready ({@code null}: once it runs); its result is reported
 * @param resources   what the instance was given by the scheduler (cpu, memory, GPU count), or {@code null}; executors
 *                    that enforce resources (Kubernetes requests and limits) read it
 * @param secretEnv   environment variables whose values are secrets, resolved at launch; set in the instance's
 *                    environment only, never in a spec, file or log that others read (Kubernetes: from a Secret). Their
 *                    names are not in {@code env}
 * @param secretFiles Secrets given to the instance as files: one file per key under
 *                    {@code $SLIPSTREAM_SECRETS_DIR/<name>/}, readable by the instance only; container executors also
 *                    mount them at {@code mountPath} when it is given
 * @param restart     how often this rank was restarted in place before this launch (runType Async; 0 for its first
 *                    launch): a launch with a higher number than the instance's last one starts a new process in place of
 *                    the ended one, whose files and exit must never be taken for the new one's (see {@link Executor#launch})
 * @param network     the run's network ({@code null}: {@code Host}): with {@code Private}, the instances of one run share a
 *                    network of their own (executors that cannot give one refuse the job, see {@link Executor#refusals})
 * @param borrowed    the run was admitted on idle capacity ({@code NotInQuota}): under memory pressure an executor that
 *                    can lets the kernel end it before a guaranteed one, as a reclaim would
 * @param memoryLimitBytes the most memory the instance may use, from its node group's {@code limits.memory}: at least
 *                    the memory of {@code resources}, which is the limit where this is 0 (see {@link #memoryLimit()})
 * @param labels      the run's labels (its job's and its own): executors that act on some read them (the simulated
 *                    executor: how long an instance runs); tenant input, never a path or a command
 * @param identity    the identity tokens of the run's {@code spec.identity}, one per audience (credentials, like secrets):
 *                    written where the instance reads them, named by {@link IdentityToken#TOKEN_FILE_ENV} and
 *                    {@link IdentityToken#TOKENS_ENV}, and replaced by {@link Executor#refreshIdentity}
 */
public record LaunchSpec(
        InstanceId id,
        String name,
        String node,
        List<Integer> gpus,
        List<String> command,
        Map<String, String> env,
        String workingDir,
        String image,
        io.slipstream.api.run.ClusterMetadata metadata,
        io.slipstream.api.spec.StartupProbe probe,
        io.slipstream.api.spec.Resources resources,
        Map<String, SecretEnv> secretEnv,
        List<SecretFiles> secretFiles,
        int restart,
        io.slipstream.api.spec.NetworkMode network,
        boolean borrowed,
        long memoryLimitBytes,
        Map<String, String> labels,
        List<IdentityToken> identity) {
    /** The run's own API token in {@code env}: a credential (see {@code env}). */
    public static final String RUN_TOKEN_ENV = "SLIPSTREAM_RUN_TOKEN";
    /** Where an instance finds the files of its {@code secretFiles}: {@code $SLIPSTREAM_SECRETS_DIR/<name>/<key>}. */
    public static final String SECRETS_DIR_ENV = "SLIPSTREAM_SECRETS_DIR";

    /** A secret environment variable: the value of {@code key} of the workspace's Secret {@code secret}. */
    public record SecretEnv(String secret, String key, SecretValue value) {
        public SecretEnv {
            requireNonNull(secret, "secret is null");
            requireNonNull(key, "key is null");
            requireNonNull(value, "value is null");
        }
    }

    /** One Secret as files: key to value, each a file named after its key. */
    public record SecretFiles(String name, String mountPath, Map<String, SecretValue> files) {
        public SecretFiles {
            requireNonNull(name, "name is null");
            files = Map.copyOf(files);
        }
    }

    public LaunchSpec {
        requireNonNull(id, "id is null");
        requireNonNull(name, "name is null");
        requireNonNull(node, "node is null");
        gpus = List.copyOf(gpus);
        command = List.copyOf(command);
        env = Map.copyOf(env);
        secretEnv = secretEnv == null ? Map.of() : Map.copyOf(secretEnv);
        secretFiles = secretFiles == null ? List.of() : List.copyOf(secretFiles);
        network = network == null ? io.slipstream.api.spec.NetworkMode.Host : network;
        labels = labels == null ? Map.of() : Map.copyOf(labels);
        identity = identity == null ? List.of() : List.copyOf(identity);
        if (command.isEmpty()) {
            throw new IllegalArgumentException("command is empty");
        }
        if (restart < 0) {
            throw new IllegalArgumentException("restart is negative: " + restart);
        }
        if (memoryLimitBytes < 0) {
            throw new IllegalArgumentException("memoryLimitBytes is negative: " + memoryLimitBytes);
        }
        for (String secret : secretEnv.keySet()) {
            if (env.containsKey(secret)) {
                throw new IllegalArgumentException(secret + " is both a plain and a secret variable");
            }
        }
    }

    /** Without identity tokens. */
    public LaunchSpec(InstanceId id, String name, String node, List<Integer> gpus, List<String> command, Map<String, String> env,
                      String workingDir, String image, io.slipstream.api.run.ClusterMetadata metadata, io.slipstream.api.spec.StartupProbe probe,
                      io.slipstream.api.spec.Resources resources, Map<String, SecretEnv> secretEnv, List<SecretFiles> secretFiles, int restart,
                      io.slipstream.api.spec.NetworkMode network, boolean borrowed, long memoryLimitBytes, Map<String, String> labels) {
        this(id, name, node, gpus, command, env, workingDir, image, metadata, probe, resources, secretEnv, secretFiles, restart, network, borrowed,
                memoryLimitBytes, labels, List.of());
    }

    /** Without labels. */
    public LaunchSpec(InstanceId id, String name, String node, List<Integer> gpus, List<String> command, Map<String, String> env,
                      String workingDir, String image, io.slipstream.api.run.ClusterMetadata metadata, io.slipstream.api.spec.StartupProbe probe,
                      io.slipstream.api.spec.Resources resources, Map<String, SecretEnv> secretEnv, List<SecretFiles> secretFiles, int restart,
                      io.slipstream.api.spec.NetworkMode network, boolean borrowed, long memoryLimitBytes) {
        this(id, name, node, gpus, command, env, workingDir, image, metadata, probe, resources, secretEnv, secretFiles, restart, network, borrowed,
                memoryLimitBytes, Map.of());
    }

    /** A first launch. */
    public LaunchSpec(InstanceId id, String name, String node, List<Integer> gpus, List<String> command, Map<String, String> env,
                      String workingDir, String image, io.slipstream.api.run.ClusterMetadata metadata, io.slipstream.api.spec.StartupProbe probe,
                      io.slipstream.api.spec.Resources resources, Map<String, SecretEnv> secretEnv, List<SecretFiles> secretFiles) {
        this(id, name, node, gpus, command, env, workingDir, image, metadata, probe, resources, secretEnv, secretFiles, 0, null, false, 0);
    }

    /** An instance without secrets. */
    public LaunchSpec(InstanceId id, String name, String node, List<Integer> gpus, List<String> command, Map<String, String> env,
                      String workingDir, String image, io.slipstream.api.run.ClusterMetadata metadata, io.slipstream.api.spec.StartupProbe probe,
                      io.slipstream.api.spec.Resources resources) {
        this(id, name, node, gpus, command, env, workingDir, image, metadata, probe, resources, Map.of(), List.of());
    }

    /** An instance without stated resources. */
    public LaunchSpec(InstanceId id, String name, String node, List<Integer> gpus, List<String> command, Map<String, String> env,
                      String workingDir, String image, io.slipstream.api.run.ClusterMetadata metadata, io.slipstream.api.spec.StartupProbe probe) {
        this(id, name, node, gpus, command, env, workingDir, image, metadata, probe, null);
    }

    /** An instance without metadata or probe. */
    public LaunchSpec(InstanceId id, String name, String node, List<Integer> gpus, List<String> command, Map<String, String> env,
                      String workingDir, String image) {
        this(id, name, node, gpus, command, env, workingDir, image, null, null, null);
    }

    /** The same instance with these secrets. */
    public LaunchSpec withSecrets(Map<String, SecretEnv> newSecretEnv, List<SecretFiles> newSecretFiles) {
        return new LaunchSpec(id, name, node, gpus, command, env, workingDir, image, metadata, probe, resources, newSecretEnv, newSecretFiles,
                restart, network, borrowed, memoryLimitBytes, labels, identity);
    }

    /** The same instance as its {@code number}th restart in place. */
    public LaunchSpec withRestart(int number) {
        return new LaunchSpec(id, name, node, gpus, command, env, workingDir, image, metadata, probe, resources, secretEnv, secretFiles, number,
                network, borrowed, memoryLimitBytes, labels, identity);
    }

    /** The same instance on the run's network {@code mode}. */
    public LaunchSpec withNetwork(io.slipstream.api.spec.NetworkMode mode) {
        return new LaunchSpec(id, name, node, gpus, command, env, workingDir, image, metadata, probe, resources, secretEnv, secretFiles, restart,
                mode, borrowed, memoryLimitBytes, labels, identity);
    }

    /** The same instance, admitted on idle capacity ({@code NotInQuota}) or not. */
    public LaunchSpec withBorrowed(boolean onIdleCapacity) {
        return new LaunchSpec(id, name, node, gpus, command, env, workingDir, image, metadata, probe, resources, secretEnv, secretFiles, restart,
                network, onIdleCapacity, memoryLimitBytes, labels, identity);
    }

    /** The same instance, which may use up to {@code bytes} of memory (its node group's {@code limits.memory}; 0: its request). */
    public LaunchSpec withMemoryLimit(long bytes) {
        return new LaunchSpec(id, name, node, gpus, command, env, workingDir, image, metadata, probe, resources, secretEnv, secretFiles, restart,
                network, borrowed, bytes, labels, identity);
    }

    /** The same instance of a run with these labels. */
    public LaunchSpec withLabels(Map<String, String> runLabels) {
        return new LaunchSpec(id, name, node, gpus, command, env, workingDir, image, metadata, probe, resources, secretEnv, secretFiles, restart,
                network, borrowed, memoryLimitBytes, runLabels, identity);
    }

    /** The same instance with these identity tokens (in the order of the run's audiences). */
    public LaunchSpec withIdentity(List<IdentityToken> tokens) {
        return new LaunchSpec(id, name, node, gpus, command, env, workingDir, image, metadata, probe, resources, secretEnv, secretFiles, restart,
                network, borrowed, memoryLimitBytes, labels, tokens);
    }

    /**
     * The most memory the instance may use: {@code memoryLimitBytes} where it is above the request, else the memory of
     * {@code resources} (0 without resources: no limit is known). Never below the request: what the scheduler counted
     * is the instance's.
     */
    public long memoryLimit() {
        long request = resources == null ? 0 : resources.memoryBytes();
        return Math.max(request, memoryLimitBytes);
    }

    /** Names, never values: neither the environment (it holds the run's token) nor a secret shows up in a log. */
    @Override
    public String toString() {
        return "LaunchSpec[id=" + id + (restart == 0 ? "" : ", restart=" + restart) + ", name=" + name + ", node=" + node + ", gpus=" + gpus + ", image=" + image + ", network=" + network + (borrowed ? ", borrowed" : "")
                + (memoryLimitBytes == 0 ? "" : ", memoryLimit=" + memoryLimitBytes) + ", env=" + env.keySet()
                + ", secretEnv=" + secretEnv.keySet() + ", secretFiles=" + secretFiles.stream().map(SecretFiles::name).toList()
                + (identity.isEmpty() ? "" : ", identity=" + identity.stream().map(IdentityToken::audience).toList()) + "]";
    }
}
