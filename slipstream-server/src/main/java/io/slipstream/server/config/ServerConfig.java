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
 * @param instances    how the local executor runs instances: isolation, uids, log limit
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
        LocalInstances instances,
        RunLimits limits,
        Duration tickInterval,
        io.slipstream.executor.kubernetes.KubernetesConfig kubernetes,
        KeyFiles keys) {

    public ServerConfig {
        keys = keys == null ? KeyFiles.DEFAULTS : keys;
        requireNonNull(host, "host is null");
        requireNonNull(dataDir, "dataDir is null");
        nodes = List.copyOf(nodes);
        inheritEnv = List.copyOf(inheritEnv);
        requireNonNull(instances, "instances is null");
        requireNonNull(limits, "limits is null");
        requireNonNull(tickInterval, "tickInterval is null");
    }

    public ServerConfig withPort(int newPort) {
        return new ServerConfig(host, newPort, dataDir, storeUrl, storeUser, storePassword, nodes, inheritEnv, instances,
                limits, tickInterval, kubernetes, keys);
    }

    public ServerConfig withStore(String url, String user, String password) {
        return new ServerConfig(host, port, dataDir, url, user, password, nodes, inheritEnv, instances, limits,
                tickInterval, kubernetes, keys);
    }

    public ServerConfig withNodes(List<NodeInfo> newNodes) {
        return new ServerConfig(host, port, dataDir, storeUrl, storeUser, storePassword, newNodes, inheritEnv, instances,
                limits, tickInterval, kubernetes, keys);
    }

    public ServerConfig withIsolation(Isolation.Mode mode) {
        return withInstances(instances.withIsolation(mode));
    }

    public ServerConfig withInstances(LocalInstances newInstances) {
        return new ServerConfig(host, port, dataDir, storeUrl, storeUser, storePassword, nodes, inheritEnv, newInstances, limits, tickInterval,
                kubernetes, keys);
    }

    public ServerConfig withLimits(RunLimits newLimits) {
        return new ServerConfig(host, port, dataDir, storeUrl, storeUser, storePassword, nodes, inheritEnv, instances,
                newLimits, tickInterval, kubernetes, keys);
    }

    public ServerConfig withKubernetes(io.slipstream.executor.kubernetes.KubernetesConfig newKubernetes) {
        return new ServerConfig(host, port, dataDir, storeUrl, storeUser, storePassword, nodes, inheritEnv, instances,
                limits, tickInterval, newKubernetes, keys);
    }

    public ServerConfig withKeys(KeyFiles newKeys) {
        return new ServerConfig(host, port, dataDir, storeUrl, storeUser, storePassword, nodes, inheritEnv, instances, limits, tickInterval,
                kubernetes, newKeys);
    }

    public ServerConfig withTickInterval(Duration newTick) {
        return new ServerConfig(host, port, dataDir, storeUrl, storeUser, storePassword, nodes, inheritEnv, instances,
                limits, newTick, kubernetes, keys);
    }
}
