package io.slipstream.store.jdbc;

import static io.slipstream.store.jdbc.Columns.REASON;
import static io.slipstream.store.jdbc.Columns.instant;
import static io.slipstream.store.jdbc.Columns.time;
import static io.slipstream.store.jdbc.Columns.truncate;

import io.slipstream.store.NodeCondition;
import io.slipstream.store.NodeDown;
import io.slipstream.store.NodeMode;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.function.UnaryOperator;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.statement.StatementContext;

/**
 * The SQL of {@code nodes_down}: one row per node an admin declared down, draining or cordoned ({@code mode}), changed
 * by the rules of {@link NodeCondition} (down wins; otherwise the first declaration is kept, but a drain makes a cordon
 * a drain). Each change reads the row and writes it in the caller's transaction.
 */
final class NodeDownRows {
    private NodeDownRows() {
    }

    static void markDown(Handle h, NodeDown down) {
        change(h, down.node(), current -> NodeCondition.afterDown(current, down));
    }

    static boolean markUp(Handle h, String node) {
        return change(h, node, NodeCondition::afterUp).before().filter(c -> c.mode() == NodeMode.Down).isPresent();
    }

    static NodeCondition cordon(Handle h, NodeCondition cordon) {
        return change(h, cordon.node(), current -> NodeCondition.afterCordon(current, cordon)).after();
    }

    static boolean uncordon(Handle h, String node) {
        return change(h, node, NodeCondition::afterUncordon).before().filter(c -> c.mode().isCordon()).isPresent();
    }

    private record Changed(Optional<NodeCondition> before, NodeCondition after) {
    }

    /** Applies a rule to the node's row, writing only if it changed. */
    private static Changed change(Handle h, String node, UnaryOperator<NodeCondition> rule) {
        Optional<NodeCondition> current = read(h, node);
        NodeCondition next = rule.apply(current.orElse(null));
        if (next == null) {
            if (current.isPresent()) {
                h.createUpdate("DELETE FROM nodes_down WHERE node = :node").bind("node", node).execute();
            }
            return new Changed(current, null);
        }
        if (current.isPresent() && next.equals(current.get())) {
            return new Changed(current, next);
        }
        String sql = current.isPresent()
                ? "UPDATE nodes_down SET mode = :mode, reason = :reason, since = :since WHERE node = :node"
                : "INSERT INTO nodes_down (node, mode, reason, since) VALUES (:node, :mode, :reason, :since)";
        time(h.createUpdate(sql).bind("node", node).bind("mode", next.mode().name()).bind("reason", truncate(next.reason(), REASON)),
                "since", next.since()).execute();
        return new Changed(current, read(h, node).orElseThrow()); // as stored: the reason shortened, the time to the column's precision
    }

    private static Optional<NodeCondition> read(Handle h, String node) {
        return h.createQuery("SELECT * FROM nodes_down WHERE node = :node").bind("node", node).map(NodeDownRows::condition).findOne();
    }

    static Map<String, NodeDown> down(Handle h) {
        Map<String, NodeDown> down = new TreeMap<>();
        conditions(h).values().stream().filter(c -> c.mode() == NodeMode.Down).forEach(c -> down.put(c.node(), c.asDown()));
        return down;
    }

    static Map<String, NodeCondition> conditions(Handle h) {
        Map<String, NodeCondition> conditions = new TreeMap<>();
        h.createQuery("SELECT * FROM nodes_down ORDER BY node").map(NodeDownRows::condition).forEach(c -> conditions.put(c.node(), c));
        return conditions;
    }

    private static NodeCondition condition(ResultSet rs, StatementContext ctx) throws SQLException {
        return new NodeCondition(rs.getString("node"), NodeMode.read(rs.getString("mode")), rs.getString("reason"), instant(rs, "since"));
    }
}
