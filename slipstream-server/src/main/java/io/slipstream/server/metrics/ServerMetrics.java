package io.slipstream.server.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MultiGauge;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.binder.jvm.JvmGcMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.core.instrument.binder.system.ProcessorMetrics;
import io.micrometer.core.instrument.binder.system.UptimeMetrics;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.slipstream.api.run.RunState;
import io.slipstream.api.spec.Resources;
import io.slipstream.model.RunRecord;
import io.slipstream.scheduler.QuotaLedger;
import io.slipstream.server.control.LiveSnapshot;
import io.slipstream.store.Store;
import io.slipstream.store.StoreUnavailableException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The server's metrics, in Prometheus' text format at {@code /metrics} (docs/operations.md, "Metrics"): what this
 * replica did (admissions, preemptions, restarts, work lost, cycles, API requests, store calls, what ended instances
 * used) as counters and histograms, and what the store holds now (runs by state, every quota's and pool's guaranteed /
 * used / borrowed / lent / pending) as gauges read once per scrape.
 */
public final class ServerMetrics implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ServerMetrics.class);
    private static final Duration[] CYCLE_BUCKETS = {Duration.ofMillis(5), Duration.ofMillis(10), Duration.ofMillis(25), Duration.ofMillis(50),
            Duration.ofMillis(100), Duration.ofMillis(250), Duration.ofMillis(500), Duration.ofSeconds(1), Duration.ofSeconds(2), Duration.ofSeconds(5)};
    private static final String[] FIGURES = {"guaranteed", "used", "in_quota", "borrowed", "lent", "pending"};

    private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    private final RunMetrics runs;
    private final JvmGcMetrics gc = new JvmGcMetrics();
    private final Clock clock;
    private final Map<String, MultiGauge> quotaGauges = new java.util.HashMap<>();
    private final Map<String, MultiGauge> poolGauges = new java.util.HashMap<>();
    private final MultiGauge runsByState;
    private final MultiGauge quotaRuns;
    private final MultiGauge quotaShares;
    private final MultiGauge capacity;
    private final Timer cycles;
    private final Counter scrapeErrors;
    private volatile Supplier<LiveSnapshot> live = () -> null;

    public ServerMetrics(Clock clock) {
        this.clock = clock;
        this.runs = new RunMetrics(registry, clock);
        new JvmMemoryMetrics().bindTo(registry);
        gc.bindTo(registry);
        new JvmThreadMetrics().bindTo(registry);
        new ProcessorMetrics().bindTo(registry);
        new UptimeMetrics().bindTo(registry);
        for (String figure : FIGURES) {
            quotaGauges.put(figure, MultiGauge.builder("slipstream.quota." + figure).description("Each quota's " + figure.replace('_', ' ')
                    + " resources now (cpu in cores, memory in bytes, gpu in GPUs)").register(registry));
            poolGauges.put(figure, MultiGauge.builder("slipstream.pool." + figure).description("Each sharing pool's " + figure.replace('_', ' ')
                    + " resources now").register(registry));
        }
        runsByState = MultiGauge.builder("slipstream.runs").description("Runs not yet ended, by state").register(registry);
        quotaRuns = MultiGauge.builder("slipstream.quota.runs").description("Each quota's runs holding resources (admitted) and queued (pending)")
                .register(registry);
        quotaShares = MultiGauge.builder("slipstream.quota.weighted.share")
                .description("Each quota's weighted share of its pool's idle capacity (docs/quotas.md, \"Fair sharing\"); +Inf: weight 0 while it borrows")
                .register(registry);
        capacity = MultiGauge.builder("slipstream.cluster.resources").description("Capacity of schedulable nodes, and the part no quota guarantees")
                .register(registry);
        cycles = Timer.builder("slipstream.cycle.duration").description("Control-loop cycles").serviceLevelObjectives(CYCLE_BUCKETS).register(registry);
        scrapeErrors = Counter.builder("slipstream.metrics.store.errors").description("Scrapes whose figures from the store could not be read")
                .register(registry);
    }

    /** The store, timed and watched for the runs it writes; the server uses this one. */
    public Store observe(Store store) {
        return ObservedStore.wrap(store, registry, runs);
    }

    /**
     * What the gauges read at each scrape: the live snapshot, when the last cycle ended and whether this replica leads.
     */
    public void readFrom(Supplier<LiveSnapshot> snapshot, Supplier<Instant> lastCycleAt, BooleanSupplier leading) {
        this.live = snapshot;
        Gauge.builder("slipstream.cycle.last.age.seconds", () -> {
            Instant last = lastCycleAt.get();
            return last == null ? Double.NaN : Duration.between(last, clock.instant()).toMillis() / 1000.0;
        }).description("Seconds since the control loop last completed a cycle (NaN: none yet, e.g. a standby)").register(registry);
        Gauge.builder("slipstream.leader", () -> leading.getAsBoolean() ? 1 : 0).description("1 while this replica leads the control loop")
                .register(registry);
    }

    public void cycle(Duration took) {
        cycles.record(took);
    }

    /** One API request: {@code route} is its path template ({@code /api/v1/runs/{run}}), never the raw path. */
    public void request(String method, String route, int status, long millis) {
        Timer.builder("slipstream.api.request").description("API requests, by method, route and status code")
                .tag("method", method).tag("route", route).tag("code", Integer.toString(status)).register(registry)
                .record(millis, TimeUnit.MILLISECONDS);
    }

    /** The text Prometheus scrapes, with the gauges read from the store first. */
    public String scrape() {
        refresh();
        return registry.scrape();
    }

    private synchronized void refresh() {
        LiveSnapshot snapshot;
        try {
            snapshot = live.get();
        } catch (StoreUnavailableException e) {
            scrapeErrors.increment();
            LOG.debug("metrics: the store cannot be read; gauges keep their last values: {}", e.getMessage());
            return;
        }
        if (snapshot == null) {
            return;
        }
        Map<RunState, Integer> byState = new EnumMap<>(RunState.class);
        for (RunState state : RunState.values()) {
            if (!state.isFinal()) {
                byState.put(state, 0);
            }
        }
        for (RunRecord run : snapshot.runs().values()) {
            byState.merge(run.state(), 1, Integer::sum);
        }
        List<MultiGauge.Row<?>> states = new ArrayList<>();
        byState.forEach((state, count) -> states.add(MultiGauge.Row.of(Tags.of("state", state.name()), count)));
        runsByState.register(states, true);

        QuotaLedger ledger = QuotaLedger.of(snapshot.snapshot());
        Map<String, List<MultiGauge.Row<?>>> quotaRows = new java.util.HashMap<>();
        Map<String, List<MultiGauge.Row<?>>> poolRows = new java.util.HashMap<>();
        List<MultiGauge.Row<?>> runRows = new ArrayList<>();
        List<MultiGauge.Row<?>> shareRows = new ArrayList<>();
        for (QuotaLedger.QuotaLine line : ledger.quotas()) {
            Tags tags = Tags.of("quota", line.quota().toString(), "pool", line.pool());
            Resources[] figures = {line.guaranteed(), line.used(), line.inQuota(), line.borrowed(), line.lent(), line.pending()};
            for (int i = 0; i < FIGURES.length; i++) {
                rows(quotaRows.computeIfAbsent(FIGURES[i], f -> new ArrayList<>()), tags, figures[i]);
            }
            runRows.add(MultiGauge.Row.of(tags.and("status", "admitted"), line.admittedRuns()));
            runRows.add(MultiGauge.Row.of(tags.and("status", "pending"), line.pendingRuns()));
            shareRows.add(MultiGauge.Row.of(tags, line.weightedShare()));
        }
        for (QuotaLedger.PoolLine line : ledger.pools()) {
            Tags tags = Tags.of("pool", line.pool());
            Resources[] figures = {line.guaranteed(), line.used(), line.inQuota(), line.borrowed(), line.lent(), line.pending()};
            for (int i = 0; i < FIGURES.length; i++) {
                rows(poolRows.computeIfAbsent(FIGURES[i], f -> new ArrayList<>()), tags, figures[i]);
            }
        }
        for (String figure : FIGURES) {
            quotaGauges.get(figure).register(quotaRows.getOrDefault(figure, List.of()), true);
            poolGauges.get(figure).register(poolRows.getOrDefault(figure, List.of()), true);
        }
        quotaRuns.register(runRows, true);
        quotaShares.register(shareRows, true);
        List<MultiGauge.Row<?>> cluster = new ArrayList<>();
        rows(cluster, Tags.of("kind", "capacity"), ledger.capacity());
        rows(cluster, Tags.of("kind", "unguaranteed"), ledger.unguaranteed());
        capacity.register(cluster, true);
    }

    private static void rows(List<MultiGauge.Row<?>> rows, Tags tags, Resources amount) {
        rows.add(MultiGauge.Row.of(tags.and("resource", "cpu"), amount.milliCpu() / 1000.0));
        rows.add(MultiGauge.Row.of(tags.and("resource", "memory"), (double) amount.memoryBytes()));
        rows.add(MultiGauge.Row.of(tags.and("resource", "gpu"), amount.gpu()));
    }

    @Override
    public void close() {
        gc.close();
        registry.close();
    }
}
