package io.slipstream.executor.slurm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.slipstream.api.spec.Resources;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** What a line of sinfo says of a node: its capacity, GPUs, features as labels, and whether Slurm starts jobs there. */
class SlurmNodeTest {
    private final List<String> told = new ArrayList<>();

    private SlurmNode parse(String line) {
        return SlurmNode.parse(line, "gpu", told::add);
    }

    @Test
    void aGpuNodeWithItsTypeFeaturesAndAddress() {
        SlurmNode node = parse("gpu-a01|64|512000|gpu:A100_80GB:8(S:0-1),nic:1|ib,nvlink|mixed|10.1.0.1|gpu-a01.cluster|none");
        assertThat(node.info().capacity()).isEqualTo(new Resources(64_000, 512_000L << 20, 8, "a100-80gb"));
        assertThat(node.info().labels()).containsOnlyKeys("feature.slurm.slipstream.io/ib", "feature.slurm.slipstream.io/nvlink");
        assertThat(node.address()).isEqualTo("10.1.0.1");
        assertThat(node.hostname()).isEqualTo("gpu-a01.cluster");
        assertThat(node.placeable()).isTrue();
        assertThat(node.unavailable()).isNull();
    }

    @Test
    void gpusWithoutATypeAreOfTheConfiguredModelAndTypesAreCountedTogether() {
        assertThat(parse("n1|8|1000|gpu:4|(null)|idle|n1|n1|none").info().capacity()).isEqualTo(new Resources(8000, 1000L << 20, 4, "gpu"));
        assertThat(parse("n2|8|1000|gpu:v100:2,gpu:t4:1|(null)|idle|n2|n2|none").info().capacity().gpu()).isEqualTo(3);
        assertThat(parse("n3|8|1000|(null)|(null)|idle|n3|n3|none").info().capacity()).isEqualTo(new Resources(8000, 1000L << 20, 0, null));
    }

    @Test
    void aNodeSlurmStartsNoJobOnIsNotPlaceableAndSaysWhy() {
        for (String state : List.of("drained", "draining", "down", "down*", "idle*", "idle~", "maint", "reserved", "fail", "future", "unknown")) {
            assertThat(parse("n1|8|1000|(null)|(null)|" + state + "|n1|n1|disk trouble").placeable()).as(state).isFalse();
        }
        assertThat(parse("n1|8|1000|(null)|(null)|drained|n1|n1|disk trouble | ticket 7").unavailable())
                .isEqualTo("Slurm has node n1 drained (disk trouble | ticket 7)");
        for (String state : List.of("idle", "mixed", "allocated", "completing")) {
            assertThat(parse("n1|8|1000|(null)|(null)|" + state + "|n1|n1|none").placeable()).as(state).isTrue();
        }
    }

    @Test
    void aNodeSlipstreamCannotNameIsLeftOutSayingSo() {
        assertThat(parse("Node_7|8|1000|(null)|(null)|idle|n|n|none")).isNull();
        assertThat(parse("n1|8|1000|(null)|bad feature!|idle|n|n|none").info().labels()).isEmpty();
        assertThat(told).hasSize(2).allSatisfy(message -> assertThat(message).containsAnyOf("Node_7", "bad feature!"));
        assertThatThrownBy(() -> parse("n1|8|1000")).isInstanceOf(IllegalArgumentException.class);
    }
}
