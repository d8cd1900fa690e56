package io.slipstream.store.memory;

import static io.slipstream.store.memory.Stored.micros;
import static io.slipstream.store.memory.Stored.truncate;

import io.slipstream.store.NodeDown;
import java.util.Map;
import java.util.TreeMap;

/** The nodes declared down in an {@link InMemoryStore}, the first declaration kept (the JDBC store's {@code NodeDownRows}). */
final class NodeDownTable {
    private NodeDownTable() {
    }

    static void markDown(Tables t, NodeDown down) {
        if (!t.nodesDown.containsKey(down.node())) {
            t.nodesDown().put(down.node(), new NodeDown(down.node(), truncate(down.reason(), Stored.REASON), micros(down.since())));
        }
    }

    static boolean markUp(Tables t, String node) {
        return t.nodesDown.containsKey(node) && t.nodesDown().remove(node) != null;
    }

    static Map<String, NodeDown> down(Tables t) {
        return new TreeMap<>(t.nodesDown);
    }
}
