package io.slipstream.simulator.engine;

/**
 * Integrates, over virtual time, what each tenant holds: guaranteed and borrowed GPUs, and what it lends. Between
 * two events everything is constant, so each {@link #advance} adds rate x duration. What is borrowed at a moment is
 * attributed to lenders in proportion to their unused guarantees (and to capacity nobody is guaranteed). Each
 * tenant's weighted entitlement to what is borrowed: at each moment, what all tenants borrow divided among those with
 * demand (queued jobs that may borrow, or borrowing) by their quotas' weights.
 */
final class Recorder {
    private final int tenants;
    private final long[] quota;
    private final long unguaranteed;
    private final long windowStart;
    private final long windowEnd;
    private final long bucket;

    private final long[] guaranteed;
    private final long[] borrowed;
    private final double[] weights;
    /** Per tenant: its queued jobs that may borrow. */
    private final int[] demand;
    private long last;

    final double[] allocatedGpuMs;
    final double[] borrowedGpuMs;
    final double[] lentGpuMs;
    final double[] entitledGpuMs;
    double windowGpuMs;
    final double[][] timeline;

    /** Round bucket widths, each at most 2.5 times the one before: the first at or above span / 300 gives 120 to 300 buckets. */
    private static final long[] BUCKETS = {1_000, 2_000, 5_000, 10_000, 15_000, 30_000, 60_000, 120_000, 300_000, 600_000, 900_000, 1_800_000,
            3_600_000, 7_200_000, 10_800_000, 21_600_000, 43_200_000, 86_400_000, 172_800_000, 432_000_000, 604_800_000};
    static final int MOST_BUCKETS = 300;

    Recorder(long[] quotaGpus, double[] weights, long clusterGpus, long windowStart, long windowEnd) {
        this.tenants = quotaGpus.length;
        this.weights = weights.clone();
        this.demand = new int[tenants];
        this.entitledGpuMs = new double[tenants];
        this.quota = quotaGpus.clone();
        long sum = 0;
        for (long q : quotaGpus) {
            sum += q;
        }
        this.unguaranteed = Math.max(0, clusterGpus - sum);
        this.windowStart = windowStart;
        this.windowEnd = Math.max(windowEnd, windowStart + 1);
        this.bucket = bucketMillis(this.windowEnd - windowStart);
        this.guaranteed = new long[tenants];
        this.borrowed = new long[tenants];
        this.allocatedGpuMs = new double[tenants];
        this.borrowedGpuMs = new double[tenants];
        this.lentGpuMs = new double[tenants];
        int buckets = (int) ((this.windowEnd - windowStart + bucket - 1) / bucket);
        this.timeline = new double[tenants][Math.max(1, buckets)];
        this.last = windowStart;
    }

    /**
     * The width of the timeline's buckets for a window of {@code spanMillis}: the smallest round one that gives at most
     * {@link #MOST_BUCKETS}, at least a second: a chart of 120 to 300 points over any window longer than 5 minutes
     * (90 minutes: 180 buckets of 30 s; 60 days: 240 of 6 h).
     */
    static long bucketMillis(long spanMillis) {
        long least = (spanMillis + MOST_BUCKETS - 1) / MOST_BUCKETS;
        for (long width : BUCKETS) {
            if (width >= least) {
                return width;
            }
        }
        long week = BUCKETS[BUCKETS.length - 1];
        return (least + week - 1) / week * week;
    }

    /** GPU-ms per tenant and bucket, as the GPUs held on average in the bucket (the last one over the part in the window). */
    double[][] averageGpus() {
        double[][] average = new double[timeline.length][];
        for (int i = 0; i < average.length; i++) {
            average[i] = new double[timeline[i].length];
            for (int b = 0; b < average[i].length; b++) {
                long covered = Math.min(bucket, windowEnd - windowStart - b * bucket);
                average[i][b] = timeline[i][b] / covered;
            }
        }
        return average;
    }

    long bucketMillis() {
        return bucket;
    }

    /**
     * Counts ({@code sign} 1) what the job holds as it stands, or takes out (-1) what was counted: its live instances on
     * its guarantee, and the rest (borrowed, and instances a shrink is removing, which still hold GPUs).
     */
    void holding(SimJob job, int sign) {
        if (sign > 0) {
            long live = job.liveGpus();
            long borrowed = job.inQuota ? job.borrowedLiveGpus() : live;
            job.recordedGuaranteed = live - borrowed + job.releasingGpus(true);
            job.recordedBorrowed = borrowed + job.releasingGpus(false);
        }
        allocate(job.tenant, job.recordedGuaranteed, true, sign);
        allocate(job.tenant, job.recordedBorrowed, false, sign);
    }

    void allocate(int tenant, long gpus, boolean inQuota, int sign) {
        if (inQuota) {
            guaranteed[tenant] += sign * gpus;
        } else {
            borrowed[tenant] += sign * gpus;
        }
    }

    /** A job of the tenant that may borrow joined ({@code sign} 1) or left (-1) the queue. */
    void demand(int tenant, int sign) {
        demand[tenant] += sign;
    }

    void promote(int tenant, int gpus) {
        borrowed[tenant] -= gpus;
        guaranteed[tenant] += gpus;
    }

    void advance(long t) {
        long dt = t - last;
        if (dt <= 0) {
            return;
        }
        long totalBorrowed = 0;
        long idle = unguaranteed;
        long held = 0;
        for (int i = 0; i < tenants; i++) {
            long g = guaranteed[i] + borrowed[i];
            held += g;
            allocatedGpuMs[i] += (double) g * dt;
            borrowedGpuMs[i] += (double) borrowed[i] * dt;
            totalBorrowed += borrowed[i];
            idle += Math.max(0, quota[i] - guaranteed[i]);
        }
        if (totalBorrowed > 0) {
            double wanting = 0;
            for (int i = 0; i < tenants; i++) {
                wanting += demand[i] > 0 || borrowed[i] > 0 ? weights[i] : 0;
            }
            for (int i = 0; wanting > 0 && i < tenants; i++) {
                if (demand[i] > 0 || borrowed[i] > 0) {
                    entitledGpuMs[i] += totalBorrowed * weights[i] / wanting * dt;
                }
            }
        }
        if (totalBorrowed > 0 && idle > 0) {
            for (int i = 0; i < tenants; i++) {
                long unused = Math.max(0, quota[i] - guaranteed[i]);
                lentGpuMs[i] += (double) totalBorrowed * unused / idle * dt;
            }
        }
        long from = Math.max(last, windowStart);
        long to = Math.min(t, windowEnd);
        if (to > from) {
            windowGpuMs += (double) held * (to - from);
            for (long start = from; start < to; ) {
                int index = (int) ((start - windowStart) / bucket);
                long end = Math.min(to, windowStart + (index + 1) * bucket);
                for (int i = 0; i < tenants; i++) {
                    timeline[i][index] += (double) (guaranteed[i] + borrowed[i]) * (end - start);
                }
                start = end;
            }
        }
        last = t;
    }
}
