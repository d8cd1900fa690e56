package io.slipstream.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Instant;
import org.junit.jupiter.api.Test;

/** The rules of a node's condition, which every store applies alike (held to them by {@link NodeConditionContract}). */
class NodeConditionTest {
    private static final Instant T0 = Instant.parse("2026-03-03T00:00:00Z");
    private static final NodeCondition DOWN = new NodeCondition("n", NodeMode.Down, "disk", T0);
    private static final NodeCondition DRAINING = new NodeCondition("n", NodeMode.Draining, "by alice", T0);
    private static final NodeCondition CORDONED = new NodeCondition("n", NodeMode.Cordoned, "by alice", T0);
    private static final NodeCondition LATER_DRAIN = new NodeCondition("n", NodeMode.Draining, "by bob", T0.plusSeconds(1));
    private static final NodeCondition LATER_CORDON = new NodeCondition("n", NodeMode.Cordoned, "by bob", T0.plusSeconds(1));

    @Test
    void downWinsAndOnlyUpLiftsIt() {
        NodeDown down = new NodeDown("n", "power", T0.plusSeconds(2));
        assertThat(NodeCondition.afterDown(null, down)).isEqualTo(NodeCondition.of(down));
        assertThat(NodeCondition.afterDown(CORDONED, down)).isEqualTo(NodeCondition.of(down));
        assertThat(NodeCondition.afterDown(DRAINING, down)).isEqualTo(NodeCondition.of(down));
        assertThat(NodeCondition.afterDown(DOWN, down)).as("the first declaration is kept").isEqualTo(DOWN);
        assertThat(NodeCondition.afterCordon(DOWN, LATER_CORDON)).isEqualTo(DOWN);
        assertThat(NodeCondition.afterCordon(DOWN, LATER_DRAIN)).isEqualTo(DOWN);
        assertThat(NodeCondition.afterUncordon(DOWN)).isEqualTo(DOWN);
        assertThat(NodeCondition.afterUp(DOWN)).isNull();
    }

    @Test
    void aDrainMakesACordonADrainAndUncordonLiftsBoth() {
        assertThat(NodeCondition.afterCordon(null, LATER_CORDON)).isEqualTo(LATER_CORDON);
        assertThat(NodeCondition.afterCordon(CORDONED, LATER_CORDON)).isEqualTo(CORDONED);
        assertThat(NodeCondition.afterCordon(CORDONED, LATER_DRAIN)).isEqualTo(LATER_DRAIN);
        assertThat(NodeCondition.afterCordon(DRAINING, LATER_CORDON)).isEqualTo(DRAINING);
        assertThat(NodeCondition.afterCordon(DRAINING, LATER_DRAIN)).isEqualTo(DRAINING);
        assertThat(NodeCondition.afterUp(CORDONED)).isEqualTo(CORDONED);
        assertThat(NodeCondition.afterUp(DRAINING)).isEqualTo(DRAINING);
        assertThat(NodeCondition.afterUncordon(CORDONED)).isNull();
        assertThat(NodeCondition.afterUncordon(DRAINING)).isNull();
        assertThat(NodeCondition.afterUncordon(null)).isNull();
        assertThatThrownBy(() -> NodeCondition.afterCordon(null, DOWN)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void aStoredModeIsReadAsData() {
        assertThat(NodeMode.read(null)).as("a row from before modes").isEqualTo(NodeMode.Down);
        assertThat(NodeMode.read("Draining")).isEqualTo(NodeMode.Draining);
        assertThat(NodeMode.read("Quarantined")).as("one a newer build wrote: kept off, nothing stopped").isEqualTo(NodeMode.Cordoned);
    }
}
