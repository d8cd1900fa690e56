package io.slipstream.server.service;

import io.slipstream.api.run.QuotaId;
import io.slipstream.api.wire.UsageReportView;
import io.slipstream.api.wire.UsageSeriesView;
import io.slipstream.model.usage.UsageKind;
import io.slipstream.scheduler.QuotaLedger;
import io.slipstream.server.api.ApiException;
import io.slipstream.server.auth.Principal;
import io.slipstream.store.Store;
import io.slipstream.store.UsageGrouping;
import io.slipstream.store.UsagePoint;
import io.slipstream.store.UsageQuery;
import io.slipstream.store.UsageSums;
import io.slipstream.store.UsageTotal;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * The usage charts' figures ({@code GET /api/v1/usage/series}): the store's roll-ups by quota and step, turned into
 * each step's average GPUs, queue length and waits, per quota, per sharing pool, or for the whole cluster. Each series'
 * totals are made by {@link UsageService#line} from the same roll-ups, so they are the usage report's figures.
 */
public final class UsageSeriesService {
    /** What a series is of. */
    public enum Of {
        /** The caller's quotas (and their runs without one), as the report by quota has them. */
        QUOTA,
        /**
         * Every sharing pool and the pool of runs without a quota: sums over teams, no workspace named; for admins. A
         * member who saw a pool's history could take their own quotas' series from it and have the other teams' (and
         * the pool of runs without a quota is every workspace's): other teams' figures are their business, as in
         * {@code GET /api/v1/pools}, which shows a member their own quotas' shares only. A quota belongs to the pool it
         * is in now; usage of a quota deleted since is in no pool.
         */
        POOL,
        /** Everything, beside the nodes' GPUs: for admins. */
        CLUSTER
    }

    private static final double MILLIS_PER_HOUR = 3_600_000.0;
    /** Series in a report's order: by workspace, then quota (runs without one first). */
    private static final Comparator<UsageTotal.Key> KEY_ORDER = Comparator
            .comparing(UsageTotal.Key::workspace, Comparator.nullsFirst(Comparator.naturalOrder()))
            .thenComparing(UsageTotal.Key::quota, Comparator.nullsFirst(Comparator.naturalOrder()));
    private final Store store;
    private final Supplier<Map<QuotaId, String>> pools;
    private final Supplier<Integer> capacityGpu;

    /**
     * @param pools each quota's sharing pool now (from the quota documents: the runs and nodes a whole ledger reads are
     *              not needed to name a pool)
     * @param capacityGpu the GPUs of the schedulable nodes now, beside the cluster's series
     */
    public UsageSeriesService(Store store, Supplier<Map<QuotaId, String>> pools, Supplier<Integer> capacityGpu) {
        this.store = store;
        this.pools = pools;
        this.capacityGpu = capacityGpu;
    }

    /**
     * The series of {@code window} ending at {@code until} rounded up to a whole step (half-open); {@code workspace}
     * only {@link Of#QUOTA}.
     */
    public UsageSeriesView series(Principal caller, UsageWindow window, Of of, String workspace, Instant until, Instant now) {
        // Before the store is read: a pool's or the cluster's history holds other teams' figures.
        if (of != Of.QUOTA && !caller.admin()) {
            throw ApiException.forbidden("only admins see the usage of a sharing pool or of the whole cluster, which hold other teams' "
                    + "(by=quota shows yours)");
        }
        Instant end = window.endOf(until);
        Instant start = window.startOf(end);
        Set<String> workspaces = of == Of.QUOTA ? caller.visibleWorkspaces() : null;
        if (workspace != null) {
            workspaces = caller.canAccess(workspace) ? Set.of(workspace) : Set.of();
        }
        List<UsagePoint> points = store.usage().series(new UsageQuery(workspaces, UsageGrouping.QUOTA, start, end, now), window.grain());
        return switch (of) {
            case QUOTA -> {
                Map<QuotaId, String> pools = this.pools.get();
                yield view(window, of, start, now, points, total -> total.key(), pools::get, null);
            }
            case POOL -> {
                Map<QuotaId, String> pools = this.pools.get();
                yield view(window, of, start, now, points.stream().filter(p -> poolOf(p.total().key(), pools) != null).toList(),
                        total -> new UsageTotal.Key(null, poolOf(total.key(), pools), null, null), key -> null, null);
            }
            case CLUSTER -> view(window, of, start, now, points, total -> new UsageTotal.Key(null, null, null, null), key -> null,
                    capacityGpu.get());
        };
    }

    /** The pool of a quota's usage now; {@code null} for a quota that is no more. */
    private static String poolOf(UsageTotal.Key key, Map<QuotaId, String> pools) {
        return key.quota() == null ? QuotaLedger.NO_QUOTA_POOL : pools.get(new QuotaId(key.workspace(), key.quota()));
    }

    /**
     * The view of {@code points} (by quota, at the window's grain): each point's total put under its series'
     * key ({@code seriesKey}; a pool's name goes in the key's quota) and into the step that holds it. A step's
     * averages are over its time until {@code now}: the step that holds now over its part so far (over all of it, its
     * bar would dip for the hours still to come), and steps wholly after now have no point. Pure.
     */
    static UsageSeriesView view(UsageWindow window, Of of, Instant since, Instant now, List<UsagePoint> points,
                                Function<UsageTotal, UsageTotal.Key> seriesKey,
                                Function<QuotaId, String> poolOfQuota, Integer capacityGpu) {
        long start = since.toEpochMilli();
        Map<UsageTotal.Key, List<List<UsageTotal>>> bySeries = new TreeMap<>(KEY_ORDER);
        for (UsagePoint point : points) {
            int step = (int) ((point.bucketMs() - start) / window.stepMs());
            List<List<UsageTotal>> steps = bySeries.computeIfAbsent(seriesKey.apply(point.total()), k -> emptySteps(window.steps()));
            UsageTotal total = point.total();
            steps.get(step).add(new UsageTotal(seriesKey.apply(total), total.kind(), total.gpuMillis(), total.cpuMilliMillis(), total.millis(),
                    total.lostGpuMillis(), total.lostCpuMillis(), total.usedCpuMillis(), total.waits()));
        }
        if (of == Of.CLUSTER && bySeries.isEmpty()) {
            bySeries.put(new UsageTotal.Key(null, null, null, null), emptySteps(window.steps()));
        }
        List<UsageSeriesView.Series> series = new ArrayList<>();
        bySeries.forEach((key, steps) -> {
            List<UsageSeriesView.Point> shown = new ArrayList<>();
            for (int i = 0; i < steps.size() && start + i * window.stepMs() < now.toEpochMilli(); i++) {
                long stepStart = start + i * window.stepMs();
                shown.add(point(steps.get(i), Math.min(stepStart + window.stepMs(), now.toEpochMilli()) - stepStart));
            }
            List<UsageTotal> all = steps.stream().flatMap(List::stream).toList();
            series.add(switch (of) {
                case QUOTA -> new UsageSeriesView.Series(key.workspace(), key.quota(),
                        key.quota() == null ? QuotaLedger.NO_QUOTA_POOL : poolOfQuota.apply(new QuotaId(key.workspace(), key.quota())),
                        shown, totals(all));
                case POOL -> new UsageSeriesView.Series(null, null, key.quota(), shown, totals(all));
                case CLUSTER -> new UsageSeriesView.Series(null, null, null, shown, totals(all));
            });
        });
        List<String> buckets = new ArrayList<>();
        for (int i = 0; i < window.steps(); i++) {
            buckets.add(Instant.ofEpochMilli(start + i * window.stepMs()).toString());
        }
        Instant until = Instant.ofEpochMilli(start + window.steps() * window.stepMs());
        return new UsageSeriesView(window.name().toLowerCase(Locale.ROOT), since.toString(), until.toString(),
                Duration.ofMillis(window.stepMs()).toString(), window.stepMs() / MILLIS_PER_HOUR, of.name().toLowerCase(Locale.ROOT), buckets, series,
                capacityGpu);
    }

    private static List<List<UsageTotal>> emptySteps(int steps) {
        List<List<UsageTotal>> empty = new ArrayList<>(steps);
        for (int i = 0; i < steps; i++) {
            empty.add(new ArrayList<>());
        }
        return empty;
    }

    /** One step's averages over its {@code stepMs} until now. */
    private static UsageSeriesView.Point point(List<UsageTotal> totals, long stepMs) {
        Map<UsageKind, UsageTotal> byKind = byKind(totals);
        UsageTotal.Waits waits = waits(totals);
        // Averages rounded as the report's hours are (UsageService.ratio): no float noise in charts' figures.
        return new UsageSeriesView.Point(UsageService.hours(stepMs), UsageService.ratio(byKind.get(UsageKind.IN_QUOTA).gpuMillis(), stepMs),
                UsageService.ratio(byKind.get(UsageKind.BORROWED).gpuMillis(), stepMs),
                UsageService.ratio(byKind.get(UsageKind.LENT).gpuMillis(), stepMs), UsageService.ratio(byKind.get(UsageKind.QUEUED).millis(), stepMs),
                UsageService.ratio(byKind.get(UsageKind.QUEUED).gpuMillis(), stepMs), waits.count(), meanHours(waits),
                waits.count() == 0 ? null : UsageService.hours(waits.longestMillis()));
    }

    /** The window's totals: the report's hours ({@link UsageService#view} of the same totals) and the waits. */
    private static UsageSeriesView.Totals totals(List<UsageTotal> all) {
        UsageReportView.Line line = UsageService.line(new UsageTotal.Key(null, null, null, null), all);
        UsageTotal.Waits waits = waits(all);
        return new UsageSeriesView.Totals(line.gpuHours(), line.queued(), waits.count(), meanHours(waits),
                waits.count() == 0 ? null : UsageService.hours(waits.longestMillis()));
    }

    private static Map<UsageKind, UsageTotal> byKind(List<UsageTotal> totals) {
        Map<UsageKind, UsageTotal> byKind = new LinkedHashMap<>();
        UsageTotal.Key none = new UsageTotal.Key(null, null, null, null);
        for (UsageKind kind : UsageKind.values()) {
            byKind.put(kind, new UsageTotal(none, kind, 0, 0, 0, 0, 0));
        }
        for (UsageTotal total : totals) {
            byKind.merge(total.kind(), new UsageTotal(none, total.kind(), total.gpuMillis(), total.cpuMilliMillis(), total.millis(), total.lostGpuMillis(),
                    total.lostCpuMillis(), total.usedCpuMillis(), total.waits()), UsageSums::plus);
        }
        return byKind;
    }

    private static UsageTotal.Waits waits(List<UsageTotal> totals) {
        return totals.stream().map(UsageTotal::waits).reduce(UsageTotal.Waits.NONE, UsageTotal.Waits::plus);
    }

    private static Double meanHours(UsageTotal.Waits waits) {
        return waits.count() == 0 ? null : UsageService.hours((double) waits.millis() / waits.count());
    }
}
