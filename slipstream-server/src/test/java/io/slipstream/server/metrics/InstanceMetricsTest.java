package io.slipstream.server.metrics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.slipstream.api.run.InstanceUsage;
import io.slipstream.api.run.RunId;
import io.slipstream.model.usage.UsageChange;
import io.slipstream.model.usage.UsageKind;
import io.slipstream.store.Store;
import io.slipstream.store.memory.InMemoryStore;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import org.junit.jupiter.api.Test;

/** What ended instances used, as {@code /metrics} shows it: counted by workspace once their end is committed. */
class InstanceMetricsTest {
    private static final Instant T0 = Instant.parse("2026-12-01T10:00:00Z");

    private static UsageChange.Measured measured(String workspace, long memoryPeak, long cpuNanos) {
        return new UsageChange.Measured(new RunId("train-1"), UsageKind.IN_QUOTA, workspace, "q", "alice", "train",
                InstanceUsage.of(memoryPeak, cpuNanos), T0);
    }

    @Test
    void anEndedInstancesCpuTimeAndMemoryPeakCountByWorkspaceOnceCommitted() {
        try (ServerMetrics metrics = new ServerMetrics(Clock.fixed(T0, ZoneOffset.UTC))) {
            Store store = metrics.observe(new InMemoryStore());
            assertThatThrownBy(() -> store.commit(tx -> {
                tx.recordUsage(List.of(measured("team-a", 1L << 30, 9_000_000_000L)));
                throw new IllegalStateException("rolled back");
            })).isInstanceOf(IllegalStateException.class);
            assertThat(metrics.scrape()).doesNotContain("slipstream_instance_cpu_seconds_total{");

            store.commit(tx -> tx.recordUsage(List.of(measured("team-a", 100L << 20, 2_500_000_000L), measured("team-a", 3L << 30, -1))));
            store.commit(tx -> tx.recordUsage(List.of(measured("team-b", -1, 500_000_000L))));
            String scrape = metrics.scrape();
            assertThat(scrape).contains("slipstream_instance_cpu_seconds_total{workspace=\"team-a\"} 2.5")
                    .contains("slipstream_instance_cpu_seconds_total{workspace=\"team-b\"} 0.5")
                    .contains("slipstream_instance_memory_peak_bytes_count{workspace=\"team-a\"} 2")
                    .contains("slipstream_instance_memory_peak_bytes_max{workspace=\"team-a\"} " + (double) (3L << 30))
                    .contains("slipstream_instance_memory_peak_bytes_bucket{workspace=\"team-a\",le=\"1.34217728E8\"} 1")
                    .doesNotContain("slipstream_instance_memory_peak_bytes_count{workspace=\"team-b\"}");
        }
    }
}
