package io.slipstream.simulator.input;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The jobs to replay, in submission order, and where they came from; {@code skipped}: rows of the source that are
 * not jobs by a documented rule (still running at the trace's end, no GPUs), counted so the report can say so.
 */
public record Trace(String source, List<TraceJob> jobs, List<Skipped> skipped) {
    public Trace {
        List<TraceJob> sorted = new ArrayList<>(jobs);
        sorted.sort(Comparator.comparingLong(TraceJob::submitMillis).thenComparingInt(TraceJob::index));
        jobs = List.copyOf(sorted);
        skipped = List.copyOf(skipped);
    }

    public Trace(String source, List<TraceJob> jobs) {
        this(source, jobs, List.of());
    }

    /** Why rows were skipped. */
    public enum SkipReason {
        /** No end time: the job was still running when the trace was taken, so its duration is unknown. */
        NO_END,
        /** It asks for no GPUs: nothing for a GPU scheduler to decide. */
        NO_GPUS
    }

    /** {@code rows} rows skipped for {@code reason}; {@code exampleLine}: the first of them (1 is the header). */
    public record Skipped(SkipReason reason, int rows, int exampleLine) {
    }

    public long firstSubmitMillis() {
        return jobs.isEmpty() ? 0 : jobs.get(0).submitMillis();
    }

    public long lastSubmitMillis() {
        return jobs.isEmpty() ? 0 : jobs.get(jobs.size() - 1).submitMillis();
    }

    /** Tenants in name order. */
    public List<String> tenants() {
        return jobs.stream().map(TraceJob::tenant).distinct().sorted().toList();
    }

    /** GPU-hours each tenant's jobs need, run once without interruption. */
    public Map<String, Double> gpuHoursByTenant() {
        Map<String, Double> hours = new TreeMap<>();
        jobs.forEach(job -> hours.merge(job.tenant(), job.gpuHours(), Double::sum));
        return hours;
    }

    /**
     * Each tenant's peak demand: the most GPUs its jobs would hold if every job started the moment it was submitted,
     * averaged over windows of {@code windowMillis} aligned to the trace's start (0: at any instant). Averaging over
     * a day or a week looks past the spikes of a few large jobs.
     */
    public Map<String, Long> peakGpusByTenant(long windowMillis) {
        return windowMillis <= 0 ? instantPeaks() : windowPeaks(windowMillis);
    }

    private Map<String, Long> instantPeaks() {
        Map<String, List<long[]>> edges = new TreeMap<>();
        for (TraceJob job : jobs) {
            List<long[]> list = edges.computeIfAbsent(job.tenant(), t -> new ArrayList<>());
            list.add(new long[] {job.submitMillis(), job.totalGpus()});
            list.add(new long[] {job.submitMillis() + Math.max(1, job.durationMillis()), -job.totalGpus()});
        }
        Map<String, Long> peaks = new TreeMap<>();
        edges.forEach((tenant, list) -> {
            // Ends before starts at the same instant: a job that ends as another starts does not overlap it.
            list.sort(Comparator.<long[]>comparingLong(e -> e[0]).thenComparingLong(e -> e[1]));
            long now = 0;
            long peak = 0;
            for (long[] edge : list) {
                now += edge[1];
                peak = Math.max(peak, now);
            }
            peaks.put(tenant, peak);
        });
        return peaks;
    }

    private Map<String, Long> windowPeaks(long window) {
        Map<String, Map<Long, Double>> gpuMillis = new TreeMap<>();
        long origin = firstSubmitMillis();
        for (TraceJob job : jobs) {
            Map<Long, Double> buckets = gpuMillis.computeIfAbsent(job.tenant(), t -> new java.util.HashMap<>());
            long end = job.submitMillis() + Math.max(1, job.durationMillis());
            for (long t = job.submitMillis(); t < end; ) {
                long bucket = (t - origin) / window;
                long bucketEnd = Math.min(end, origin + (bucket + 1) * window);
                buckets.merge(bucket, (double) job.totalGpus() * (bucketEnd - t), Double::sum);
                t = bucketEnd;
            }
        }
        Map<String, Long> peaks = new TreeMap<>();
        gpuMillis.forEach((tenant, buckets) -> peaks.put(tenant,
                Math.round(buckets.values().stream().mapToDouble(Double::doubleValue).max().orElse(0) / window)));
        return peaks;
    }
}
