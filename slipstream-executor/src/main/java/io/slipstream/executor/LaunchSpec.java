package io.slipstream.executor;

import static java.util.Objects.requireNonNull;

import io.slipstream.api.run.InstanceId;
import java.util.List;
import java.util.Map;

/**
 * Everything an executor needs to start one instance, decided and persisted by the control plane beforehand.
 *
 * @param env        the complete environment the control plane wants the instance to see (its spec's env and the
 *                   {@code SLIPSTREAM_*} variables); executors add only what is theirs to know (GPU visibility).
 *                   {@code SLIPSTREAM_RUN_TOKEN} is a credential: an executor that writes specs where others read
 *                   them keeps it in its secret store (Kubernetes: a Secret), and it never goes to a log
 * @param workingDir relative to the instance's own directory, or {@code null}
 * @param metadata   the run as the instance sees it, written to {@code SLIPSTREAM_METADATA_FILE} before it starts; the
 *                   executor fills in where the storage is; {@code null} for none
 * @param probe      tells when the instance is ready ({@code null}: once it runs); its result is reported
 * @param resources  what the instance was given by the scheduler (cpu, memory, GPU count), or {@code null}; executors
 *                   that enforce resources (Kubernetes requests and limits) read it
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
        io.slipstream.api.spec.Resources resources) {
    /** The run's own API token in {@code env}: a credential (see {@code env}). */
    public static final String RUN_TOKEN_ENV = "SLIPSTREAM_RUN_TOKEN";

    public LaunchSpec {
        requireNonNull(id, "id is null");
        requireNonNull(name, "name is null");
        requireNonNull(node, "node is null");
        gpus = List.copyOf(gpus);
        command = List.copyOf(command);
        env = Map.copyOf(env);
        if (command.isEmpty()) {
            throw new IllegalArgumentException("command is empty");
        }
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
}
