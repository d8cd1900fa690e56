package io.slipstream.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.slipstream.server.config.Plugins;
import org.junit.jupiter.api.Test;

/**
 * The jar users run holds every executor and store: the server finds them by name, so one missing from this module's
 * dependencies would only show when a config names it. (EndToEndIT starts the packaged jar.)
 */
class DistributionPluginsTest {
    @Test
    void everyExecutorAndStoreIsOnTheClassPath() {
        assertThat(Plugins.installed().executorNames()).isEqualTo("kubernetes, local, simulated, slurm");
        assertThat(Plugins.installed().storeNames()).isEqualTo("h2, postgresql");
    }
}
