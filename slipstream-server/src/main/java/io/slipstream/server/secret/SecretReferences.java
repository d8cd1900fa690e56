package io.slipstream.server.secret;

import io.slipstream.api.problem.Problems;
import io.slipstream.api.spec.JobSpec;
import io.slipstream.api.spec.NodeGroupSpec;
import io.slipstream.api.spec.SecretMount;
import io.slipstream.api.spec.SecretRef;
import io.slipstream.store.SecretRecord;
import io.slipstream.store.Store;
import io.slipstream.store.StoreReads;
import java.util.Map;
import java.util.Optional;

/** Checks that what a job refers to exists: each Secret in the job's own workspace, each key in its Secret. */
public final class SecretReferences {
    private SecretReferences() {
    }

    /** Adds a problem, at the field that refers to it, for every Secret or key of {@code job} that {@code workspace} lacks. */
    public static void check(StoreReads tx, String workspace, JobSpec job, String prefix, Problems problems) {
        for (int i = 0; i < job.nodeGroups().size(); i++) {
            NodeGroupSpec group = job.nodeGroups().get(i);
            String path = prefix + "nodeGroups[" + i + "].";
            for (Map.Entry<String, SecretRef> entry : new java.util.TreeMap<>(group.secretEnv()).entrySet()) {
                SecretRef ref = entry.getValue();
                Optional<SecretRecord> secret = tx.credentials().secret(workspace, ref.secret());
                if (secret.isEmpty()) {
                    problems.add(path + "env." + entry.getKey() + ".secretRef", missingSecret(workspace, ref.secret()));
                } else if (!secret.get().keys().contains(ref.key())) {
                    problems.add(path + "env." + entry.getKey() + ".secretRef", "secret '" + ref.secret() + "' has no key '" + ref.key() + "' (it has: "
                            + String.join(", ", secret.get().keys()) + ")");
                }
            }
            for (int k = 0; k < group.secrets().size(); k++) {
                SecretMount mount = group.secrets().get(k);
                if (tx.credentials().secret(workspace, mount.name()).isEmpty()) {
                    problems.add(path + "secrets[" + k + "].name", missingSecret(workspace, mount.name()));
                }
            }
        }
    }

    private static String missingSecret(String workspace, String name) {
        return "workspace '" + workspace + "' has no secret '" + name + "' (a job refers to secrets of its own workspace only)";
    }
}
