package io.slipstream.executor.slurm;

import static org.assertj.core.api.Assertions.assertThat;

import io.slipstream.api.spec.Documents;
import io.slipstream.api.spec.JobSpec;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** What of a job the Slurm executor cannot run is refused when the job is applied, by field. */
class SlurmRefusalsTest {
    private static JobSpec job(String spec) {
        return (JobSpec) Documents.readAll(("apiVersion: slipstream/v1\nkind: Job\nmetadata: {name: j, workspace: w}\nspec:\n" + spec)
                .getBytes(StandardCharsets.UTF_8)).get(0).spec();
    }

    @Test
    void imagesFractionsOfCpusBurstsAndPrivateNetworksAreRefused() {
        assertThat(SlurmRefusals.of(job("""
                  network: Private
                  nodeGroups:
                  - {name: a, resources: {cpu: 500m, memory: 1Gi}, command: ["true"]}
                  - {name: b, image: "registry.example.com/t:1", resources: {cpu: 2, memory: 1Gi}, limits: {memory: 2Gi}, command: ["true"]}
                """))).containsOnlyKeys("nodeGroups[0].resources.cpu", "nodeGroups[1].image", "nodeGroups[1].limits.memory", "network");
        assertThat(SlurmRefusals.of(job("""
                  nodeGroups:
                  - {name: a, replicas: 2, resources: {cpu: 4, memory: 1Gi, gpu: 1}, command: ["true"]}
                """))).isEmpty();
    }

    @Test
    void theWrappersVariablesAndSbatchPatternsInTheWorkingDirectoryAreRefused() {
        assertThat(SlurmRefusals.of(job("""
                  nodeGroups:
                  - {name: a, resources: {cpu: 1, memory: 1Gi}, command: ["true"], env: {_ss_dir: /tmp, OK: "1"}, workingDir: "out/%u"}
                  - {name: b, resources: {cpu: 1, memory: 1Gi}, command: ["true"], workingDir: "a\\\\b"}
                  - {name: c, resources: {cpu: 1, memory: 1Gi}, command: ["true"], workingDir: "sub/dir"}
                """))).containsOnlyKeys("nodeGroups[0].env._ss_dir", "nodeGroups[0].workingDir", "nodeGroups[1].workingDir");
    }
}
