package io.slipstream.server.config;

import static java.util.Objects.requireNonNull;

import io.slipstream.executor.local.Isolation;
import io.slipstream.executor.local.LocalProcessExecutor;
import io.slipstream.executor.local.UidRangeClaims;
import java.nio.file.Path;

/**
 * How the local executor runs instances ({@code instances:} in the config file).
 *
 * @param isolation whether instances run under uids of their own
 * @param uidRange  the uids this server claims for them, or {@code null} to let one be chosen (see {@link UidRangeClaims})
 * @param uidClaims where the servers of this machine record which uids they own
 * @param logLimit  bytes kept of each log of an instance; 0 keeps everything
 * @param maxProcessesPerRun with isolation, how many processes (threads count) a run may have; 0: from the machine's pid_max
 */
public record LocalInstances(Isolation.Mode isolation, UidRangeClaims.Range uidRange, Path uidClaims, long logLimit, int maxProcessesPerRun) {
    public static final LocalInstances DEFAULTS = new LocalInstances(Isolation.Mode.auto, null, Path.of(UidRangeClaims.DEFAULT_DIRECTORY),
            LocalProcessExecutor.DEFAULT_LOG_LIMIT_BYTES, 0);

    public LocalInstances {
        requireNonNull(isolation, "isolation is null");
        requireNonNull(uidClaims, "uidClaims is null");
    }

    public LocalInstances withIsolation(Isolation.Mode mode) {
        return new LocalInstances(mode, uidRange, uidClaims, logLimit, maxProcessesPerRun);
    }

    public LocalInstances withUidClaims(Path directory) {
        return new LocalInstances(isolation, uidRange, directory, logLimit, maxProcessesPerRun);
    }

    public LocalInstances withUidRange(UidRangeClaims.Range range) {
        return new LocalInstances(isolation, range, uidClaims, logLimit, maxProcessesPerRun);
    }

    public LocalInstances withMaxProcessesPerRun(int count) {
        return new LocalInstances(isolation, uidRange, uidClaims, logLimit, count);
    }

    public LocalInstances withLogLimit(long bytes) {
        return new LocalInstances(isolation, uidRange, uidClaims, bytes, maxProcessesPerRun);
    }
}
