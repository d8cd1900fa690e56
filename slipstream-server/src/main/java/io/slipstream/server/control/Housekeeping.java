package io.slipstream.server.control;

import io.slipstream.store.FencedException;
import io.slipstream.store.StoreUnavailableException;
import java.time.Duration;
import java.time.Instant;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The cycle's chores beside the runs: schedules are looked at every second at most, retention once a minute (both
 * read every job or finished run). Neither may hold up the runs: a failure is logged and tried again later; only an
 * outage or the loss of the lead ends the cycle.
 */
final class Housekeeping {
    private static final Logger LOG = LoggerFactory.getLogger(Housekeeping.class);
    private static final Duration SCHEDULES_INTERVAL = Duration.ofSeconds(1);
    private static final Duration RETENTION_INTERVAL = Duration.ofMinutes(1);

    private final Schedules schedules;
    private final Retention retention;
    private Instant nextSchedulesCheck = Instant.MIN;
    private Instant nextRetentionSweep = Instant.MIN;

    Housekeeping(Schedules schedules, Retention retention) {
        this.schedules = schedules;
        this.retention = retention;
    }

    void run(Instant now) {
        if (!now.isBefore(nextSchedulesCheck)) {
            nextSchedulesCheck = now.plus(SCHEDULES_INTERVAL);
            try {
                schedules.tick();
            } catch (StoreUnavailableException | FencedException e) {
                throw e; // the loop pauses (an outage) or stops (fenced): logged there
            } catch (RuntimeException e) {
                LOG.warn("schedules could not be checked; trying again in a second: {}", e.toString());
            }
        }
        if (!now.isBefore(nextRetentionSweep)) {
            nextRetentionSweep = now.plus(RETENTION_INTERVAL);
            try {
                if (retention.sweep() == Retention.BATCH) {
                    nextRetentionSweep = now; // more to remove: go on next cycle
                }
            } catch (StoreUnavailableException | FencedException e) {
                throw e;
            } catch (RuntimeException e) {
                LOG.warn("old runs could not be removed; trying again in a minute: {}", e.toString());
            }
        }
    }
}
