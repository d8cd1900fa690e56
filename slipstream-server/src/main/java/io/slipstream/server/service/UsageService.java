package io.slipstream.server.service;

import io.slipstream.api.wire.UsageReportView;
import io.slipstream.model.usage.UsageKind;
import io.slipstream.server.auth.Principal;
import io.slipstream.store.Store;
import io.slipstream.store.UsageBuckets;
import io.slipstream.store.UsageGrouping;
import io.slipstream.store.UsageQuery;
import io.slipstream.store.UsageTotal;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The usage report ({@code GET /api/v1/usage}): the store adds up the time inside the window, this turns the totals
 * into hours per group, limited to the workspaces the caller may see.
 */
public final class UsageService {
    private static final double MILLIS_PER_HOUR = 3_600_000.0;
    private static final double MILLICORES = 1000.0;
    private final Store store;

    public UsageService(Store store) {
        this.store = store;
    }

    /**
     * The caller's usage in {@code [since, until)} widened to whole hours, as Slurm's reports are (the store keeps
     * hourly roll-ups; the current hour counts until {@code now}), of {@code workspace} ({@code null}: every one the
     * caller may see).
     */
    public UsageReportView report(Principal caller, String workspace, UsageGrouping by, Instant since, Instant until, Instant now) {
        Set<String> workspaces = caller.visibleWorkspaces();
        if (workspace != null) {
            workspaces = caller.canAccess(workspace) ? Set.of(workspace) : Set.of();
        }
        Instant from = Instant.ofEpochMilli(UsageBuckets.floor(since.toEpochMilli(), UsageBuckets.HOUR));
        Instant to = Instant.ofEpochMilli(UsageBuckets.ceil(until.toEpochMilli(), UsageBuckets.HOUR));
        List<UsageTotal> totals = store.usage().totals(new UsageQuery(workspaces, by, from, to, now));
        return view(totals, by, from, to);
    }

    /** The report of {@code totals} (in the store's order: by key, then kind). */
    static UsageReportView view(List<UsageTotal> totals, UsageGrouping by, Instant since, Instant until) {
        Map<UsageTotal.Key, List<UsageTotal>> byKey = new LinkedHashMap<>();
        for (UsageTotal total : totals) {
            byKey.computeIfAbsent(total.key(), k -> new ArrayList<>()).add(total);
        }
        List<UsageReportView.Line> lines = new ArrayList<>();
        byKey.forEach((key, ofKey) -> lines.add(line(key, ofKey)));
        UsageReportView.Line total = line(new UsageTotal.Key(null, null, null, null), totals);
        return new UsageReportView(since.toString(), until.toString(), by.name().toLowerCase(java.util.Locale.ROOT), lines, total);
    }

    /** One line of the report: the hours of {@code totals}, all of group {@code key}. */
    static UsageReportView.Line line(UsageTotal.Key key, List<UsageTotal> totals) {
        double[] gpu = new double[UsageKind.values().length];
        double[] cpu = new double[UsageKind.values().length];
        double queuedMillis = 0;
        double lostGpu = 0;
        double lostCpu = 0;
        double usedCpu = 0;
        for (UsageTotal total : totals) {
            usedCpu += total.usedCpuMillis();
            gpu[total.kind().ordinal()] += total.gpuMillis();
            cpu[total.kind().ordinal()] += total.cpuMilliMillis();
            lostGpu += total.lostGpuMillis();
            lostCpu += total.lostCpuMillis();
            if (total.kind() == UsageKind.QUEUED) {
                queuedMillis += total.millis();
            }
        }
        UsageReportView.Hours gpuHours = new UsageReportView.Hours(hours(gpu[UsageKind.IN_QUOTA.ordinal()]), hours(gpu[UsageKind.BORROWED.ordinal()]),
                hours(gpu[UsageKind.LENT.ordinal()]), hours(lostGpu));
        UsageReportView.Hours cpuHours = new UsageReportView.Hours(hours(cpu[UsageKind.IN_QUOTA.ordinal()] / MILLICORES),
                hours(cpu[UsageKind.BORROWED.ordinal()] / MILLICORES), hours(cpu[UsageKind.LENT.ordinal()] / MILLICORES), hours(lostCpu / MILLICORES));
        UsageReportView.Queued queued = new UsageReportView.Queued(hours(queuedMillis), hours(gpu[UsageKind.QUEUED.ordinal()]));
        return new UsageReportView.Line(key.workspace(), key.quota(), key.user(), key.job(), gpuHours, cpuHours, hours(usedCpu), queued);
    }

    /** Hours, to the millisecond's precision (no float noise in reports and CSV). */
    static double hours(double millis) {
        return ratio(millis, MILLIS_PER_HOUR);
    }

    /** {@code millis} over {@code overMillis}, to a millionth: an average over a time, a figure in hours. */
    static double ratio(double millis, double overMillis) {
        return Math.round(millis / overMillis * 1e6) / 1e6;
    }
}
