package io.slipstream.server.config;

import static java.util.Objects.requireNonNull;

import io.slipstream.executor.ExecutorSettings;
import io.slipstream.scheduler.FairSharingPreemption;
import io.slipstream.store.StoreSettings;
import java.nio.file.Path;
import java.time.Duration;

/**
 * Everything the server is configured with, after defaults, the config file and command-line options. The store's and
 * the executor's settings are their plug-ins' ({@link Plugins}): the server hands them to the factory of their name.
 *
 * @param store        the store's settings ({@code store:}), read by the store of their name
 * @param executor     the executor's settings (its fields of the config file), read by the executor of their name
 * @param limits       grace periods, runtime limit and retention of runs
 * @param tickInterval how often the control loop runs when nothing wakes it
 * @param leaderLease  how long a replica's leadership holds unless renewed (replicas on one store)
 * @param keys         where the secret key and the token pepper are
 * @param fairSharingPreemption whether a borrower below its fair share may preempt other quotas' borrowers
 *                     ({@code fairSharing.preemption})
 * @param identityIssuer the public URL that issues runs' identity tokens ({@code identity.issuer}; {@code null}: none
 *                     are issued, and the discovery document is not served)
 */
public record ServerConfig(
        String host,
        int port,
        Path dataDir,
        StoreSettings store,
        ExecutorSettings executor,
        RunLimits limits,
        Duration tickInterval,
        KeyFiles keys,
        Duration leaderLease,
        FairSharingPreemption fairSharingPreemption,
        String identityIssuer) {

    /** How long a replica's leadership lasts unless renewed: a standby takes over within it. */
    public static final Duration DEFAULT_LEADER_LEASE = Duration.ofSeconds(10);

    public ServerConfig(String host, int port, Path dataDir, StoreSettings store, ExecutorSettings executor, RunLimits limits,
                        Duration tickInterval, KeyFiles keys) {
        this(host, port, dataDir, store, executor, limits, tickInterval, keys, DEFAULT_LEADER_LEASE, FairSharingPreemption.DEFAULT, null);
    }

    public ServerConfig {
        keys = keys == null ? KeyFiles.DEFAULTS : keys;
        requireNonNull(host, "host is null");
        requireNonNull(dataDir, "dataDir is null");
        requireNonNull(store, "store is null");
        requireNonNull(executor, "executor is null");
        requireNonNull(limits, "limits is null");
        requireNonNull(tickInterval, "tickInterval is null");
        leaderLease = leaderLease == null ? DEFAULT_LEADER_LEASE : leaderLease;
        fairSharingPreemption = fairSharingPreemption == null ? FairSharingPreemption.DEFAULT : fairSharingPreemption;
        identityIssuer = identityIssuer != null && identityIssuer.endsWith("/") ? identityIssuer.substring(0, identityIssuer.length() - 1) : identityIssuer;
    }

    public ServerConfig withIdentityIssuer(String issuer) {
        return new ServerConfig(host, port, dataDir, store, executor, limits, tickInterval, keys, leaderLease, fairSharingPreemption, issuer);
    }

    public ServerConfig withPort(int newPort) {
        return new ServerConfig(host, newPort, dataDir, store, executor, limits, tickInterval, keys, leaderLease, fairSharingPreemption, identityIssuer);
    }

    public ServerConfig withStore(StoreSettings newStore) {
        return new ServerConfig(host, port, dataDir, newStore, executor, limits, tickInterval, keys, leaderLease, fairSharingPreemption, identityIssuer);
    }

    public ServerConfig withExecutor(ExecutorSettings newExecutor) {
        return new ServerConfig(host, port, dataDir, store, newExecutor, limits, tickInterval, keys, leaderLease, fairSharingPreemption, identityIssuer);
    }

    /** The executor's settings, for tests and tools that know which executor they configured. */
    public <S extends ExecutorSettings> S executor(Class<S> type) {
        return type.cast(executor);
    }

    public ServerConfig withLimits(RunLimits newLimits) {
        return new ServerConfig(host, port, dataDir, store, executor, newLimits, tickInterval, keys, leaderLease, fairSharingPreemption, identityIssuer);
    }

    public ServerConfig withKeys(KeyFiles newKeys) {
        return new ServerConfig(host, port, dataDir, store, executor, limits, tickInterval, newKeys, leaderLease, fairSharingPreemption, identityIssuer);
    }

    public ServerConfig withLeaderLease(Duration newLease) {
        return new ServerConfig(host, port, dataDir, store, executor, limits, tickInterval, keys, newLease, fairSharingPreemption, identityIssuer);
    }

    public ServerConfig withTickInterval(Duration newTick) {
        return new ServerConfig(host, port, dataDir, store, executor, limits, newTick, keys, leaderLease, fairSharingPreemption, identityIssuer);
    }

    public ServerConfig withFairSharingPreemption(FairSharingPreemption newPreemption) {
        return new ServerConfig(host, port, dataDir, store, executor, limits, tickInterval, keys, leaderLease, newPreemption, identityIssuer);
    }
}
