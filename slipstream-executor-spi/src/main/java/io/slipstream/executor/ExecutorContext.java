package io.slipstream.executor;

import java.nio.file.Path;
import java.time.Clock;
import java.util.Optional;

/** What the server gives an executor it creates ({@link ExecutorFactory#create}). */
public interface ExecutorContext {
    /** The server's data directory (absolute, exists, the server's own): an executor keeps its state below it. */
    Path dataDir();

    /** The server's clock: the times of reports and activity come from it. */
    Clock clock();

    /**
     * A directory to put first on the PATH of instances that run on this machine: it holds the {@code slipstream}
     * command, readable by every uid. Made on the first call; empty when the server does not run from its jar (tests).
     */
    Optional<Path> instanceTools();
}
