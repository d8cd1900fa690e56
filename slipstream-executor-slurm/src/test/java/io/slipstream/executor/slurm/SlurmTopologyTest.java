package io.slipstream.executor.slurm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Slurm's network tree as node labels, from what {@code scontrol show topology} printed on Slurm 22.05. */
class SlurmTopologyTest {
    @Test
    void eachNodeIsLabelledWithItsSwitchAtEveryLevel() {
        List<String> said = new ArrayList<>();
        Map<String, Map<String, String>> labels = SlurmTopology.labels("""
                SwitchName=leaf1 Level=0 LinkSpeed=1 Nodes=node[01-02]
                SwitchName=leaf2 Level=0 LinkSpeed=1 Nodes=node03,node04
                SwitchName=spine Level=1 LinkSpeed=1 Nodes=node[01-04] Switches=leaf[1-2]
                """, said::add);
        assertThat(labels).containsOnlyKeys("node01", "node02", "node03", "node04");
        assertThat(labels.get("node01")).containsExactly(Map.entry("topology.slurm.slipstream.io/switch-level-0", "leaf1"),
                Map.entry("topology.slurm.slipstream.io/switch-level-1", "spine"));
        assertThat(labels.get("node04")).containsEntry("topology.slurm.slipstream.io/switch-level-0", "leaf2");
        assertThat(said).isEmpty();
    }

    @Test
    void whatIsNotUnderstoodIsLeftOutAndSaid() {
        List<String> said = new ArrayList<>();
        Map<String, Map<String, String>> labels = SlurmTopology.labels("""
                SwitchName=bad/name Level=0 LinkSpeed=1 Nodes=node01
                SwitchName=leaf1 Level=0 LinkSpeed=1 Nodes=node[01-02
                SwitchName=leaf2 Level=0 LinkSpeed=1 Nodes=node02
                SwitchName=leaf3 Level=0 LinkSpeed=1 Nodes=node02
                something else entirely
                """, said::add);
        assertThat(labels).containsExactly(Map.entry("node02", Map.of("topology.slurm.slipstream.io/switch-level-0", "leaf2")));
        assertThat(said).hasSize(4).anyMatch(line -> line.contains("bad/name")).anyMatch(line -> line.contains("unbalanced"))
                .anyMatch(line -> line.contains("under two switches")).anyMatch(line -> line.contains("not understood"));
    }

    @Test
    void hostlistsExpandAsSlurmWritesThem() {
        assertThat(SlurmTopology.expand("node[01-03,07],gpu1")).containsExactly("node01", "node02", "node03", "node07", "gpu1");
        assertThat(SlurmTopology.expand("r[1-2]-n[8-10]")).containsExactly("r1-n8", "r1-n9", "r1-n10", "r2-n8", "r2-n9", "r2-n10");
        assertThat(SlurmTopology.expand("a[009-011]")).containsExactly("a009", "a010", "a011");
        for (String bad : List.of("n[1-", "n]1[", "n[a-b]", "n[3-1]", "n[1-2-3]", "n[0-999999999]", "n[[1]]")) {
            assertThatThrownBy(() -> SlurmTopology.expand(bad)).as(bad).isInstanceOf(IllegalArgumentException.class);
        }
    }
}
