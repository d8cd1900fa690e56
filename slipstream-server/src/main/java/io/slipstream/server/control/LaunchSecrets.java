package io.slipstream.server.control;

import io.slipstream.api.spec.NodeGroupSpec;
import io.slipstream.executor.LaunchSpec;
import java.util.List;
import java.util.Map;

/**
 * The values of what a node group refers to in Secrets, read when its instances launch (so a Secret changed after a
 * run was submitted gives the run its new value). Implementations MUST be safe for concurrent use.
 */
public interface LaunchSecrets {
    /** What one node group's instances get: variables, and files per Secret. */
    record Resolved(Map<String, LaunchSpec.SecretEnv> env, List<LaunchSpec.SecretFiles> files) {
        public Resolved {
            env = Map.copyOf(env);
            files = List.copyOf(files);
        }

        public static final Resolved NONE = new Resolved(Map.of(), List.of());
    }

    /**
     * @throws Unavailable when a Secret or key it refers to is gone (deleted or changed since the run was submitted) or
     *                     cannot be opened; the message names it, never a value
     */
    Resolved resolve(String workspace, NodeGroupSpec group);

    /** A referred-to Secret that cannot be given to an instance: its run fails with this reason, without restarts. */
    final class Unavailable extends RuntimeException {
        /** How the reason of an instance that could not get its secrets starts. */
        public static final String REASON = "SecretUnavailable";

        public Unavailable(String message) {
            super(message, null, false, false);
        }
    }
}
