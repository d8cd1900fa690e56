package io.slipstream.store.jdbc;

import static io.slipstream.store.jdbc.Columns.REASON;
import static io.slipstream.store.jdbc.Columns.instant;
import static io.slipstream.store.jdbc.Columns.time;
import static io.slipstream.store.jdbc.Columns.truncate;

import io.slipstream.store.NodeDown;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;
import org.jdbi.v3.core.Handle;

/** The SQL of {@code nodes_down}: one row per node an admin declared down, the first declaration kept until it is up again. */
final class NodeDownRows {
    private NodeDownRows() {
    }

    static void markDown(Handle h, NodeDown down) {
        boolean exists = h.createQuery("SELECT COUNT(*) FROM nodes_down WHERE node = :node").bind("node", down.node())
                .mapTo(Long.class).one() > 0;
        if (!exists) {
            time(h.createUpdate("INSERT INTO nodes_down (node, reason, since) VALUES (:node, :reason, :since)")
                    .bind("node", down.node()).bind("reason", truncate(down.reason(), REASON)), "since", down.since()).execute();
        }
    }

    static boolean markUp(Handle h, String node) {
        return h.createUpdate("DELETE FROM nodes_down WHERE node = :node").bind("node", node).execute() > 0;
    }

    static Map<String, NodeDown> down(Handle h) {
        return h.createQuery("SELECT * FROM nodes_down ORDER BY node")
                .map((rs, ctx) -> new NodeDown(rs.getString("node"), rs.getString("reason"), instant(rs, "since")))
                .list().stream().collect(Collectors.toMap(NodeDown::node, d -> d, (a, b) -> a, TreeMap::new));
    }
}
