package io.slipstream.server.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.MeterRegistry;
import io.slipstream.api.run.InstanceUsage;
import io.slipstream.model.usage.UsageChange;

/**
 * What the kernel counted of the instances whose end this replica recorded (the usage changes it committed, so that
 * replicas over one store never count one twice): their CPU time, and their memory peaks as a distribution. Tagged by
 * workspace, never by run or instance, whose number has no bound.
 */
final class InstanceMetrics {
    /** Memory peaks from 64 MiB to 1 TiB, doubling: where in that range instances' peaks fall. */
    private static final double[] PEAK_BUCKETS = new double[15];

    static {
        for (int i = 0; i < PEAK_BUCKETS.length; i++) {
            PEAK_BUCKETS[i] = (double) (64L << 20 << i);
        }
    }

    private final MeterRegistry registry;

    InstanceMetrics(MeterRegistry registry) {
        this.registry = registry;
    }

    /** An instance's end and what it used were committed. */
    void ended(UsageChange.Measured measured) {
        InstanceUsage usage = measured.usage();
        if (usage.hasCpu()) {
            Counter.builder("slipstream.instance.cpu.seconds").description("CPU time of the instances that ended, as the kernel counted it")
                    .tag("workspace", measured.workspace()).register(registry).increment(usage.cpuNanos() / 1e9);
        }
        if (usage.hasMemoryPeak()) {
            DistributionSummary.builder("slipstream.instance.memory.peak").baseUnit("bytes")
                    .description("The memory peaks of the instances that ended, as the kernel counted them")
                    .serviceLevelObjectives(PEAK_BUCKETS).tag("workspace", measured.workspace()).register(registry)
                    .record(usage.memoryPeakBytes());
        }
    }
}
