package io.slipstream.store;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import org.junit.jupiter.api.Test;

/** What every {@link Store} must do with nodes declared down, draining or cordoned: mixed into {@link BaseStoreContractTest}. */
interface NodeConditionContract {
    Instant SINCE = Instant.parse("2026-03-03T00:00:00Z");

    Store store();

    private static NodeCondition cordon(String node, String reason, long second) {
        return new NodeCondition(node, NodeMode.Cordoned, reason, SINCE.plusSeconds(second));
    }

    private static NodeCondition drain(String node, String reason, long second) {
        return new NodeCondition(node, NodeMode.Draining, reason, SINCE.plusSeconds(second));
    }

    @Test
    default void aCordonIsKeptUntilUncordonedAndADrainMakesItDraining() {
        assertThat(store().<NodeCondition>write(tx -> tx.cordonNode(cordon("node-1", "by alice: kernel upgrade", 0))))
                .isEqualTo(cordon("node-1", "by alice: kernel upgrade", 0));
        store().commit(tx -> tx.cordonNode(cordon("node-1", "by bob", 5)));
        assertThat(store().runs().nodeConditions()).as("a second cordon keeps the first").containsExactly(
                java.util.Map.entry("node-1", cordon("node-1", "by alice: kernel upgrade", 0)));
        assertThat(store().runs().downNodes()).as("a cordoned node is not down").isEmpty();

        assertThat(store().<NodeCondition>write(tx -> tx.cordonNode(drain("node-1", "by alice: move off", 9))))
                .isEqualTo(drain("node-1", "by alice: move off", 9));
        store().commit(tx -> tx.cordonNode(cordon("node-1", "by bob", 12)));
        store().commit(tx -> tx.cordonNode(drain("node-1", "by bob", 13)));
        assertThat(store().runs().nodeConditions().get("node-1")).as("a drain goes on").isEqualTo(drain("node-1", "by alice: move off", 9));

        assertThat(store().<Boolean>write(tx -> tx.markNodeUp("node-1"))).as("up lifts only down").isFalse();
        assertThat(store().runs().nodeConditions()).containsOnlyKeys("node-1");
        assertThat(store().<Boolean>write(tx -> tx.uncordonNode("node-1"))).isTrue();
        assertThat(store().<Boolean>write(tx -> tx.uncordonNode("node-1"))).isFalse();
        assertThat(store().runs().nodeConditions()).isEmpty();
    }

    @Test
    default void downWinsOverACordonAndOnlyUpLiftsIt() {
        store().commit(tx -> tx.cordonNode(drain("node-1", "by alice", 0)));
        store().commit(tx -> tx.cordonNode(cordon("node-2", "by alice", 0)));
        store().commit(tx -> tx.markNodeDown(new NodeDown("node-1", "disk failure", SINCE.plusSeconds(3))));
        assertThat(store().runs().nodeConditions().get("node-1")).isEqualTo(new NodeCondition("node-1", NodeMode.Down, "disk failure", SINCE.plusSeconds(3)));
        assertThat(store().runs().downNodes()).containsOnlyKeys("node-1");

        assertThat(store().<NodeCondition>write(tx -> tx.cordonNode(cordon("node-1", "by bob", 6))).mode()).as("a down node stays down")
                .isEqualTo(NodeMode.Down);
        assertThat(store().<Boolean>write(tx -> tx.uncordonNode("node-1"))).isFalse();
        assertThat(store().runs().downNodes().get("node-1")).isEqualTo(new NodeDown("node-1", "disk failure", SINCE.plusSeconds(3)));
        assertThat(store().<Boolean>write(tx -> tx.markNodeUp("node-1"))).isTrue();
        assertThat(store().runs().nodeConditions()).as("up: Ready").containsOnlyKeys("node-2");
        assertThat(store().runs().nodeConditions().get("node-2").mode()).isEqualTo(NodeMode.Cordoned);
    }

    @Test
    default void aCordonsReasonIsShortenedToWhatTheStoreKeeps() {
        store().commit(tx -> tx.cordonNode(cordon("node-1", "c".repeat(2000), 0)));
        assertThat(store().runs().nodeConditions().get("node-1").reason()).hasSize(1024).endsWith("…");
    }
}
