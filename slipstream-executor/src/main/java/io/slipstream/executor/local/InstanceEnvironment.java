package io.slipstream.executor.local;

import io.slipstream.api.run.Hostfile;
import io.slipstream.executor.LaunchSpec;
import io.slipstream.executor.NodeInfo;
import java.io.IOException;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/** The environment an instance of the local executor starts with. */
final class InstanceEnvironment {
    private InstanceEnvironment() {
    }

    /** What the instance sees: inherited variables, the spec's (its secrets too), then what only this executor knows. */
    /** @param secretsDir where the instance's secret files are ({@code null}: it mounts none) */
    static Map<String, String> of(LaunchSpec spec, NodeInfo node, InstanceDirectory dir, Integer uid, SharedStorage.Prepared shared,
                                  Path secretsDir, List<String> inheritedEnv, Path toolsDir) throws IOException {
        Map<String, String> env = new LinkedHashMap<>();
        for (String name : inheritedEnv) {
            String value = System.getenv(name);
            if (value != null) {
                env.put(name, value);
            }
        }
        if (toolsDir != null) {
            env.put("PATH", toolsDir + (env.containsKey("PATH") ? ":" + env.get("PATH") : ""));
        }
        if (uid != null) {
            env.put("HOME", dir.sandbox().toString()); // the server's home is not the instance's to read
        }
        env.putAll(spec.env());
        spec.secretEnv().forEach((name, secret) -> env.put(name, secret.value().reveal()));
        if (secretsDir != null) {
            env.put(LaunchSpec.SECRETS_DIR_ENV, secretsDir.toString());
        }
        env.put("TMPDIR", dir.tmp().toString());
        env.put("SLIPSTREAM_PREEMPTION_NOTICE_FILE", dir.noticeFile().toString());
        env.put("SLIPSTREAM_PREEMPTION_ACK_FILE", dir.ackFile().toString());
        env.put("SLIPSTREAM_PROGRESS_FILE", dir.progressFile().toString());
        String devices = spec.gpus().stream().map(node::gpuId).collect(Collectors.joining(","));
        env.put("CUDA_VISIBLE_DEVICES", devices);
        env.put("NVIDIA_VISIBLE_DEVICES", devices.isEmpty() ? "none" : devices);
        env.put("CUDA_DEVICE_ORDER", "PCI_BUS_ID");
        if (shared != null) {
            env.put("SLIPSTREAM_SHARED_DIR", shared.shared().toString());
            env.put("SLIPSTREAM_CHECKPOINT_DIR", shared.checkpoints().toString());
            for (var storageEntry : shared.storage()) {
                env.put(io.slipstream.api.spec.StorageSpec.envNameOf(storageEntry.name()), storageEntry.path());
            }
            env.put("SLIPSTREAM_METADATA_FILE", dir.writeMetadata(spec.metadata().withStorage(shared.storage())).toString());
            env.put("SLIPSTREAM_HOSTFILE", dir.hostfile(Hostfile.Syntax.OPEN_MPI).toString());
            env.put("SLIPSTREAM_MPICH_HOSTFILE", dir.hostfile(Hostfile.Syntax.MPICH).toString());
        }
        return env;
    }
}
