package io.slipstream.server.control;

import io.slipstream.executor.Executor;
import io.slipstream.store.ConflictException;
import io.slipstream.model.RunRecord;
import io.slipstream.store.Store;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Removes runs that finished longer ago than the retention period, with their instances' files and logs. */
final class Retention {
    private static final Logger LOG = LoggerFactory.getLogger(Retention.class);
    static final int BATCH = 100;

    private final Store store;
    private final Executor executor;
    private final Clock clock;
    private final Duration keep;

    Retention(Store store, Executor executor, Clock clock, Duration keep) {
        this.store = store;
        this.executor = executor;
        this.clock = clock;
        this.keep = keep;
    }

    /** Removes one batch; returns how many runs went. Only finished runs are ever removed. */
    int sweep() {
        List<RunRecord> expired = store.runs().finishedBefore(clock.instant().minus(keep), BATCH);
        int removed = 0;
        for (RunRecord run : expired) {
            try {
                // Files first: if this stops halfway, the run is still listed and the next sweep finishes it.
                executor.forget(run.id());
                store.commit(tx -> tx.deleteRun(run.id())); // refuses a run that is not finished
                removed++;
            } catch (ConflictException e) {
                LOG.debug("run {} is active again; kept", run.id());
            } catch (io.slipstream.store.StoreUnavailableException | io.slipstream.store.FencedException e) {
                throw e; // not this one's fault: the whole cycle pauses
            } catch (RuntimeException e) {
                LOG.warn("could not remove run {}: {}", run.id(), e.toString());
            }
        }
        if (removed > 0) {
            LOG.info("removed {} run(s) that finished more than {} ago", removed, keep);
        }
        return removed;
    }
}
