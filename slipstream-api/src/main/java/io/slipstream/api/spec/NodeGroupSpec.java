package io.slipstream.api.spec;

import static java.util.Objects.requireNonNull;

import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * One group of identical instances of a job. Exactly one of {@code shape} and {@code resources} is given by the
 * user; in a run's effective spec the shape is resolved and both are set.
 *
 * @param workingDir relative to the instance's sandbox directory; {@code null} for the sandbox itself
 * @param maxRuntime how long this group's instances may run, at most ({@code null}: as long as the run)
 */
public record NodeGroupSpec(
        String name,
        int replicas,
        String shape,
        Resources resources,
        List<String> command,
        Map<String, String> env,
        String image,
        String workingDir,
        Duration maxRuntime) {
    public NodeGroupSpec {
        requireNonNull(name, "name is null");
        command = List.copyOf(command);
        env = Map.copyOf(env);
    }

    public NodeGroupSpec withResources(Resources resolved) {
        return new NodeGroupSpec(name, replicas, shape, resolved, command, env, image, workingDir, maxRuntime);
    }
}
