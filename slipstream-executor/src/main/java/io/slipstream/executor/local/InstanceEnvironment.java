package io.slipstream.executor.local;

import io.slipstream.api.run.Hostfile;
import io.slipstream.executor.LaunchSpec;
import io.slipstream.executor.NodeInfo;
import io.slipstream.executor.local.files.InstanceDirectory;
import io.slipstream.executor.local.image.ImageCache;
import io.slipstream.executor.local.image.Sandbox;
import io.slipstream.executor.local.storage.SharedStorage;
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
        return withOwn(env, spec, node, dir, shared, secretsDir, Path::toString, null);
    }

    /**
     * What an instance in an image sees: the image's environment, the spec's (its secrets too), then what only this
     * executor knows, with the paths where the sandbox mounts them; nothing of the server's own environment.
     */
    static Map<String, String> inImage(LaunchSpec spec, NodeInfo node, InstanceDirectory dir, SharedStorage.Prepared shared, Path secretsDir,
                                       ImageCache.Image image, Sandbox sandbox) throws IOException {
        Map<String, String> env = new LinkedHashMap<>();
        for (String entry : image.env()) {
            int equals = entry.indexOf('=');
            // A name no shell takes (an image's config may have any) is left out, never a reason to fail.
            if (equals > 0 && entry.substring(0, equals).matches("[A-Za-z_][A-Za-z0-9_]*")) {
                env.put(entry.substring(0, equals), entry.substring(equals + 1));
            }
        }
        env.putIfAbsent("PATH", ImageCache.DEFAULT_PATH);
        env.put("HOME", sandbox.inside(dir.sandbox()));
        env.put("TMPDIR", "/tmp");
        return withOwn(env, spec, node, dir, shared, secretsDir, sandbox::inside, sandbox);
    }

    /** @param seen where the instance sees a path of this machine; {@code sandbox} the image's, or {@code null} */
    private static Map<String, String> withOwn(Map<String, String> env, LaunchSpec spec, NodeInfo node, InstanceDirectory dir,
                                               SharedStorage.Prepared shared, Path secretsDir, java.util.function.Function<Path, String> seen,
                                               Sandbox sandbox) throws IOException {
        env.putAll(spec.env());
        spec.secretEnv().forEach((name, secret) -> env.put(name, secret.value().reveal()));
        if (secretsDir != null) {
            env.put(LaunchSpec.SECRETS_DIR_ENV, seen.apply(secretsDir));
        }
        env.putAll(io.slipstream.executor.IdentityToken.environment(seen.apply(dir.identityDir()), spec.identity()));
        if (sandbox == null) {
            env.put("TMPDIR", dir.tmp().toString());
        }
        env.put("SLIPSTREAM_PREEMPTION_NOTICE_FILE", seen.apply(dir.noticeFile()));
        env.put("SLIPSTREAM_PREEMPTION_ACK_FILE", seen.apply(dir.ackFile()));
        env.put("SLIPSTREAM_PROGRESS_FILE", seen.apply(dir.progressFile()));
        String devices = spec.gpus().stream().map(node::gpuId).collect(Collectors.joining(","));
        env.put("CUDA_VISIBLE_DEVICES", devices);
        env.put("NVIDIA_VISIBLE_DEVICES", devices.isEmpty() ? "none" : devices);
        env.put("CUDA_DEVICE_ORDER", "PCI_BUS_ID");
        if (shared != null) {
            env.put("SLIPSTREAM_SHARED_DIR", seen.apply(shared.shared()));
            env.put("SLIPSTREAM_CHECKPOINT_DIR", seen.apply(shared.checkpoints()));
            List<io.slipstream.api.run.ClusterMetadata.Storage> storage = sandbox == null ? shared.storage() : sandbox.storageInside(shared.storage());
            for (var storageEntry : storage) {
                env.put(io.slipstream.api.spec.StorageSpec.envNameOf(storageEntry.name()), storageEntry.path());
            }
            env.put("SLIPSTREAM_METADATA_FILE", seen.apply(dir.writeMetadata(spec.metadata().withStorage(storage))));
            env.put("SLIPSTREAM_HOSTFILE", seen.apply(dir.hostfile(Hostfile.Syntax.OPEN_MPI)));
            env.put("SLIPSTREAM_MPICH_HOSTFILE", seen.apply(dir.hostfile(Hostfile.Syntax.MPICH)));
        }
        return env;
    }
}
