package io.slipstream.executor.slurm;

import io.slipstream.testing.SlurmCluster;
import java.nio.file.Path;
import java.time.Duration;

/** The executor's settings for a test's {@link SlurmCluster}. */
final class ClusterSettings {
    private ClusterSettings() {
    }

    /** Its files in {@code shared}; it polls quickly, as tests wait for it. */
    static SlurmSettings of(SlurmCluster cluster, Path shared) {
        return SlurmSettings.defaults(shared).withTrustedTenants(true).withAllowRootJobs(true).withSlurmConf(cluster.conf())
                .withPartition(SlurmCluster.PARTITION).withPollInterval(Duration.ofMillis(200)).withNodeRefresh(Duration.ofSeconds(1))
                .withCommandTimeout(Duration.ofSeconds(15));
    }
}
