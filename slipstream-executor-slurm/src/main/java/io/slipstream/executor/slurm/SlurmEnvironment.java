package io.slipstream.executor.slurm;

import io.slipstream.api.run.ClusterMetadata;
import io.slipstream.api.run.Hostfile;
import io.slipstream.executor.IdentityToken;
import io.slipstream.executor.LaunchSpec;
import io.slipstream.executor.NodeInfo;
import io.slipstream.executor.local.files.InstanceDirectory;
import io.slipstream.executor.local.storage.SharedStorage;
import java.io.IOException;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * The environment an instance of the Slurm executor starts with: the same variables, naming the same files, as the local
 * executor's process without an image (its {@code InstanceEnvironment}, which also knows images and sandboxes, and is
 * that executor's own), so that the SDKs read an instance on Slurm as one on the local executor. Written to the
 * instance's {@code env} file; its wrapper applies it, and gives Slurm's GPUs precedence over the ones named here.
 */
final class SlurmEnvironment {
    private SlurmEnvironment() {
    }

    /**
     * @param shared     the run's storage, prepared ({@code null}: the launch has no metadata)
     * @param secretsDir where its secret files are ({@code null}: none)
     */
    static Map<String, String> of(LaunchSpec spec, NodeInfo node, InstanceDirectory dir, SharedStorage.Prepared shared, Path secretsDir,
                                  List<String> inheritedEnv) throws IOException {
        Map<String, String> env = new LinkedHashMap<>();
        for (String name : inheritedEnv) {
            String value = System.getenv(name);
            if (value != null) {
                env.put(name, value);
            }
        }
        env.put("HOME", dir.sandbox().toString()); // the server's home is not the instance's to read (as on the local executor)
        env.putAll(spec.env());
        spec.secretEnv().forEach((name, secret) -> env.put(name, secret.value().reveal()));
        if (secretsDir != null) {
            env.put(LaunchSpec.SECRETS_DIR_ENV, secretsDir.toString());
        }
        env.putAll(IdentityToken.environment(dir.identityDir().toString(), spec.identity()));
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
            for (ClusterMetadata.Storage storage : shared.storage()) {
                env.put(io.slipstream.api.spec.StorageSpec.envNameOf(storage.name()), storage.path());
            }
            env.put("SLIPSTREAM_METADATA_FILE", dir.writeMetadata(spec.metadata().withStorage(shared.storage())).toString());
            env.put("SLIPSTREAM_HOSTFILE", dir.hostfile(Hostfile.Syntax.OPEN_MPI).toString());
            env.put("SLIPSTREAM_MPICH_HOSTFILE", dir.hostfile(Hostfile.Syntax.MPICH).toString());
        }
        return env;
    }
}
