package io.slipstream.store.memory;

import static io.slipstream.store.memory.Stored.micros;
import static io.slipstream.store.memory.Stored.truncate;

import io.slipstream.store.NodeCondition;
import io.slipstream.store.NodeDown;
import io.slipstream.store.NodeMode;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.UnaryOperator;

/**
 * The nodes declared down, draining or cordoned in an {@link InMemoryStore}, by the rules of {@link NodeCondition}
 * (the JDBC store's {@code NodeDownRows}).
 */
final class NodeDownTable {
    private NodeDownTable() {
    }

    static void markDown(Tables t, NodeDown down) {
        change(t, down.node(), current -> NodeCondition.afterDown(current, down));
    }

    static boolean markUp(Tables t, String node) {
        NodeCondition before = t.nodesDown.get(node);
        change(t, node, NodeCondition::afterUp);
        return before != null && before.mode() == NodeMode.Down;
    }

    static NodeCondition cordon(Tables t, NodeCondition cordon) {
        return change(t, cordon.node(), current -> NodeCondition.afterCordon(current, cordon));
    }

    static boolean uncordon(Tables t, String node) {
        NodeCondition before = t.nodesDown.get(node);
        change(t, node, NodeCondition::afterUncordon);
        return before != null && before.mode().isCordon();
    }

    /** Applies a rule to the node's condition; writes only if it changed, as stored (reason shortened, time to the microsecond). */
    private static NodeCondition change(Tables t, String node, UnaryOperator<NodeCondition> rule) {
        NodeCondition current = t.nodesDown.get(node);
        NodeCondition next = rule.apply(current);
        if (next == null) {
            if (current != null) {
                t.nodesDown().remove(node);
            }
            return null;
        }
        if (next.equals(current)) {
            return current;
        }
        NodeCondition stored = new NodeCondition(node, next.mode(), truncate(next.reason(), Stored.REASON), micros(next.since()));
        t.nodesDown().put(node, stored);
        return stored;
    }

    static Map<String, NodeDown> down(Tables t) {
        Map<String, NodeDown> down = new TreeMap<>();
        t.nodesDown.values().stream().filter(c -> c.mode() == NodeMode.Down).forEach(c -> down.put(c.node(), c.asDown()));
        return down;
    }

    static Map<String, NodeCondition> conditions(Tables t) {
        return new TreeMap<>(t.nodesDown);
    }
}
