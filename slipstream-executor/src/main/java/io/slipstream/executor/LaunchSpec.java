package io.slipstream.executor;

import static java.util.Objects.requireNonNull;

import io.slipstream.api.run.InstanceId;
import java.util.List;
import java.util.Map;

/**
 * Everything an executor needs to start one instance, decided and persisted by the control plane beforehand.
 *
 * @param env        the complete environment the control plane wants the instance to see (its spec's env and the
 *                   {@code SLIPSTREAM_*} variables); executors add only what is theirs to know (GPU visibility)
 * @param workingDir relative to the instance's own directory, or {@code null}
 */
public record LaunchSpec(
        InstanceId id,
        String name,
        String node,
        List<Integer> gpus,
        List<String> command,
        Map<String, String> env,
        String workingDir,
        String image) {
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
}
