package io.slipstream.executor.slurm;

import static org.assertj.core.api.Assertions.assertThat;

import io.slipstream.executor.Executor;
import org.junit.jupiter.api.Test;

/** What the cluster's configuration says an instance's end and its fences guarantee. */
class SlurmConfigTest {
    @Test
    void cgroupsEnforceWhatTheAdminConstrains() {
        SlurmConfig config = SlurmConfig.parse("""
                Configuration data as of 2026-12-07T04:40:00
                ProctrackType           = proctrack/cgroup
                TaskPlugin              = task/cgroup,task/affinity

                Cgroup Support Configuration:
                ConstrainCores          = yes
                ConstrainDevices        = yes
                ConstrainRAMSpace       = no
                """);
        assertThat(config.containment()).isEqualTo(Executor.Containment.EVERY_PROCESS);
        assertThat(config.enforcement().enforced()).containsExactly("cpu", "devices", "kill");
        assertThat(config.enforcement().summary()).contains("not memory");
    }

    @Test
    void withoutCgroupsOnlyTheProcessTreeGoes() {
        SlurmConfig config = SlurmConfig.parse("ProctrackType           = proctrack/pgid\nTaskPlugin              = task/none\n");
        assertThat(config.containment()).isEqualTo(Executor.Containment.PROCESS_TREE);
        assertThat(config.enforcement().enforced()).isEmpty();
        assertThat(config.enforcement().summary()).startsWith("Slurm (proctrack/pgid, task/none): nothing enforced; not memory, cpu, devices, kill");
    }
}
