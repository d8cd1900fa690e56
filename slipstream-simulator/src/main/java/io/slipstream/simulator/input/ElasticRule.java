package io.slipstream.simulator.input;

import static java.util.Objects.requireNonNull;

import io.slipstream.api.spec.IdleMode;
import java.time.Duration;

/**
 * A policy's elastic jobs ({@code elastic: {minFraction: 0.5, fromTrace: false, worldChangePause: 30s}}): a job of two
 * or more instances whose idle mode may borrow (an elastic borrower) runs with any count from its minimum to its
 * instances, the scheduler growing it onto idle capacity and shrinking it on reclaim instead of stopping it whole
 * (docs/elastic.md). Its throughput is proportional to its live instances; a change of size (a world change) pauses it
 * for {@code worldChangePause} while its survivors restart in place, and loses nothing (they save their state on the
 * change).
 *
 * @param minFraction      the minimum as a fraction of its instances, rounded up (0: none but the trace's; 1: rigid, to compare)
 * @param fromTrace        the trace's {@code min_instances}, where a row has one, before {@code minFraction}
 * @param worldChangePause from a change of size to the first progress after it
 * @param split            a borrower of one instance of an even number of GPUs above 1 runs as two instances of half as many, so
 *                         that it too may run with half its GPUs (with {@code minFraction: 1}: the same shapes, rigid)
 */
public record ElasticRule(double minFraction, boolean fromTrace, Duration worldChangePause, boolean split) {
    public ElasticRule {
        requireNonNull(worldChangePause, "worldChangePause is null");
        if (!(minFraction >= 0 && minFraction <= 1)) {
            throw new IllegalArgumentException("minFraction must be 0 to 1, is " + minFraction);
        }
    }

    /** Without splitting single instances. */
    public ElasticRule(double minFraction, boolean fromTrace, Duration worldChangePause) {
        this(minFraction, fromTrace, worldChangePause, false);
    }

    /** The job as a policy with this rule runs it: split in two instances of half its GPUs, or as it is. */
    public TraceJob shape(TraceJob job, IdleMode mode) {
        if (!split || job.instances() != 1 || job.gpus() < 2 || job.gpus() % 2 != 0 || !mode.mayBorrow()) {
            return job;
        }
        return new TraceJob(job.index(), job.submitMillis(), job.durationMillis(), job.tenant(), job.gpus() / 2, 2, job.priority(), job.idleMode(),
                job.placement(), 0);
    }

    /** The job's minimum under this rule, in instances ({@code 0}: it stays rigid). */
    public int minimumOf(TraceJob job, IdleMode mode) {
        if (job.instances() < 2 || !mode.mayBorrow()) {
            return 0;
        }
        int min;
        if (fromTrace && job.minInstances() > 0) {
            min = job.minInstances();
        } else if (minFraction > 0) {
            min = Math.max(1, (int) Math.ceil(job.instances() * minFraction - 1e-9)); // 0.5 of 3 is 2, of 4 is 2
        } else {
            return 0;
        }
        return min >= job.instances() ? 0 : min;
    }

    /** As the JSON report's parameters say it. */
    public String describe() {
        return "minFraction " + minFraction + (fromTrace ? ", fromTrace" : "") + ", worldChangePause " + io.slipstream.api.spec.Durations.format(worldChangePause)
                + (split ? ", split" : "");
    }
}
