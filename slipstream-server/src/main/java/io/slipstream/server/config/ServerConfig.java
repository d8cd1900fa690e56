package io.slipstream.server.config;

import static java.util.Objects.requireNonNull;

import io.slipstream.executor.NodeInfo;
import io.slipstream.executor.local.Isolation;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/**
 * Everything the server is configured with, after defaults, the config file and command-line options.
 *
 * @param storeUrl     a JDBC URL, or {@code null} for the embedded H2 store under {@code dataDir}
 * @param nodes        the local executor's nodes
 * @param isolation    whether instances run under uids of their own, from [firstUid, firstUid + uidCount)
 * @param limits       grace periods, runtime limit and retention of runs
 * @param tickInterval how often the control loop runs when nothing wakes it
 * @param kubernetes   with the Kubernetes executor, how it reaches the cluster; {@code null}: the local executor
 * @param keys         where the secret key and the token pepper are
 */
public record ServerConfig(
        String host,
        int port,
        Path dataDir,
        String storeUrl,
        String storeUser,
        String storePassword,
        List<NodeInfo> nodes,
        List<String> inheritEnv,
        Isolation.Mode isolation,
        int firstUid,
        int uidCount,
        RunLimits limits,
        Duration tickInterval,
        io.slipstream.executor.kubernetes.KubernetesConfig kubernetes,
        KeyFiles keys) {

    /** With the key files in the data dir. */
    public ServerConfig(String host, int port, Path dataDir, String storeUrl, String storeUser, String storePassword, List<NodeInfo> nodes,
                        List<String> inheritEnv, Isolation.Mode isolation, int firstUid, int uidCount, RunLimits limits, Duration tickInterval,
                        io.slipstream.executor.kubernetes.KubernetesConfig kubernetes) {
        this(host, port, dataDir, storeUrl, storeUser, storePassword, nodes, inheritEnv, isolation, firstUid, uidCount, limits, tickInterval,
                kubernetes, KeyFiles.DEFAULTS);
    }

    public ServerConfig {
        keys = keys == null ? KeyFiles.DEFAULTS : keys;
        requireNonNull(host, "host is null");
        requireNonNull(dataDir, "dataDir is null");
        nodes = List.copyOf(nodes);
        inheritEnv = List.copyOf(inheritEnv);
        requireNonNull(isolation, "isolation is null");
        if (firstUid < 1000 || uidCount < 1) {
            throw new IllegalArgumentException("bad uid range");
        }
        requireNonNull(limits, "limits is null");
        requireNonNull(tickInterval, "tickInterval is null");
    }

    public ServerConfig withPort(int newPort) {
        return new ServerConfig(host, newPort, dataDir, storeUrl, storeUser, storePassword, nodes, inheritEnv, isolation, firstUid, uidCount,
                limits, tickInterval, kubernetes, keys);
    }

    public ServerConfig withStore(String url, String user, String password) {
        return new ServerConfig(host, port, dataDir, url, user, password, nodes, inheritEnv, isolation, firstUid, uidCount, limits,
                tickInterval, kubernetes, keys);
    }

    public ServerConfig withNodes(List<NodeInfo> newNodes) {
        return new ServerConfig(host, port, dataDir, storeUrl, storeUser, storePassword, newNodes, inheritEnv, isolation, firstUid, uidCount,
                limits, tickInterval, kubernetes, keys);
    }

    public ServerConfig withIsolation(Isolation.Mode mode) {
        return new ServerConfig(host, port, dataDir, storeUrl, storeUser, storePassword, nodes, inheritEnv, mode, firstUid, uidCount, limits,
                tickInterval, kubernetes, keys);
    }

    public ServerConfig withLimits(RunLimits newLimits) {
        return new ServerConfig(host, port, dataDir, storeUrl, storeUser, storePassword, nodes, inheritEnv, isolation, firstUid, uidCount,
                newLimits, tickInterval, kubernetes, keys);
    }

    public ServerConfig withKubernetes(io.slipstream.executor.kubernetes.KubernetesConfig newKubernetes) {
        return new ServerConfig(host, port, dataDir, storeUrl, storeUser, storePassword, nodes, inheritEnv, isolation, firstUid, uidCount,
                limits, tickInterval, newKubernetes, keys);
    }

    public ServerConfig withTickInterval(Duration newTick) {
        return new ServerConfig(host, port, dataDir, storeUrl, storeUser, storePassword, nodes, inheritEnv, isolation, firstUid, uidCount,
                limits, newTick, kubernetes, keys);
    }

    public ServerConfig withKeys(KeyFiles newKeys) {
        return new ServerConfig(host, port, dataDir, storeUrl, storeUser, storePassword, nodes, inheritEnv, isolation, firstUid, uidCount, limits,
                tickInterval, kubernetes, newKeys);
    }
}
