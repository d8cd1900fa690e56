package io.slipstream.store.jdbc;

import static io.slipstream.store.jdbc.Columns.instant;
import static io.slipstream.store.jdbc.Columns.time;

import io.slipstream.store.Leadership;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.statement.StatementContext;

/**
 * The SQL of {@link JdbcStore}'s leadership, one row per role (today the control loop's) in each of two tables: the
 * lease in {@code leadership} (holder, epoch, expiry), which claims and releases lock, and the fence in
 * {@code leadership_fence} (the epoch), which every fenced transaction locks. A renewal writes only the lease, so it
 * never queues behind the leader's own writes; a new epoch writes both, so it waits until no transaction of the old
 * epoch is open. The two epochs change together, in one transaction.
 */
final class LeadershipRows {
    private static final String CONTROL_LOOP = "control-loop";

    private LeadershipRows() {
    }

    /** {@link io.slipstream.store.Leases#claim}, inside the caller's transaction. */
    static Leadership claim(Handle h, String holder, String goneHolder, Instant now, Duration ttl, boolean singleProcess) {
        Instant expires = now.plus(ttl);
        Optional<Leadership> current = lockedLease(h);
        long fenced = fence(h).orElse(0L);
        if (current.isEmpty()) {
            long first = fenced + 1; // 1, or past a fence left without its lease (an edit by hand): an epoch never goes back
            time(time(h.createUpdate("INSERT INTO leadership (role, holder, epoch, renewed_at, expires_at) "
                    + "VALUES (:role, :holder, :epoch, :now, :expires)").bind("role", CONTROL_LOOP).bind("holder", holder).bind("epoch", first),
                    "now", now), "expires", expires).execute();
            setFence(h, first);
            return new Leadership(holder, first, now, expires);
        }
        Leadership lease = current.get();
        // A lease whose epoch is not the fence's was moved by a build before V14 (a downgrade, then this build again):
        // its holder cannot write at it, so it is not renewed as it is but taken at an epoch past both.
        boolean inStep = fenced == lease.epoch();
        boolean renew = inStep && lease.heldBy(holder) && !lease.expiredAt(now);
        if (!renew && !lease.expiredAt(now) && !lease.heldBy(holder) && !singleProcess && !lease.heldBy(goneHolder)) {
            return lease;
        }
        long epoch = renew ? lease.epoch() : Math.max(lease.epoch(), fenced) + 1;
        if (!renew) {
            setFence(h, epoch); // waits for the old epoch's open transactions (or fails at the lock timeout: nothing changed)
        }
        time(time(h.createUpdate("UPDATE leadership SET holder = :holder, epoch = :epoch, renewed_at = :now, expires_at = :expires "
                + "WHERE role = :role").bind("role", CONTROL_LOOP).bind("holder", holder).bind("epoch", epoch), "now", now),
                "expires", expires).execute();
        return new Leadership(holder, epoch, now, expires);
    }

    static Optional<Leadership> find(Handle h) {
        return h.createQuery("SELECT * FROM leadership WHERE role = :role").bind("role", CONTROL_LOOP).map(LeadershipRows::row).findOne();
    }

    /** The lease's row, locked until the transaction ends: claims, releases and epoch moves take turns on it. */
    private static Optional<Leadership> lockedLease(Handle h) {
        return h.createQuery("SELECT * FROM leadership WHERE role = :role FOR UPDATE").bind("role", CONTROL_LOOP).map(LeadershipRows::row).findOne();
    }

    /** The fenced epoch as committed now (empty: no leader yet). */
    static Optional<Long> fence(Handle h) {
        return h.createQuery("SELECT epoch FROM leadership_fence WHERE role = :role").bind("role", CONTROL_LOOP).mapTo(Long.class).findOne();
    }

    /** The fenced epoch, its row locked until the transaction ends: no new epoch begins before then. */
    static Optional<Long> lockedFence(Handle h) {
        return h.createQuery("SELECT epoch FROM leadership_fence WHERE role = :role FOR UPDATE").bind("role", CONTROL_LOOP).mapTo(Long.class).findOne();
    }

    private static void setFence(Handle h, long epoch) {
        int updated = h.createUpdate("UPDATE leadership_fence SET epoch = :epoch WHERE role = :role").bind("role", CONTROL_LOOP).bind("epoch", epoch).execute();
        if (updated == 0) {
            h.createUpdate("INSERT INTO leadership_fence (role, epoch) VALUES (:role, :epoch)").bind("role", CONTROL_LOOP).bind("epoch", epoch).execute();
        }
    }

    /** {@link io.slipstream.store.Leases#advanceEpoch}, inside the caller's transaction. */
    static Leadership advance(Handle h, String holder, long epoch, long past) {
        Leadership lease = lockedLease(h).orElse(null);
        if (lease == null || !lease.heldBy(holder) || lease.epoch() != epoch || past < epoch) {
            return lease;
        }
        setFence(h, past + 1);
        h.createUpdate("UPDATE leadership SET epoch = :next WHERE role = :role").bind("role", CONTROL_LOOP).bind("next", past + 1).execute();
        return new Leadership(holder, past + 1, lease.renewedAt(), lease.expiresAt());
    }

    static int release(Handle h, String holder, long epoch, Instant now) {
        return time(h.createUpdate("UPDATE leadership SET expires_at = :now WHERE role = :role AND holder = :holder AND epoch = :epoch")
                .bind("role", CONTROL_LOOP).bind("holder", holder).bind("epoch", epoch), "now", now).execute();
    }

    private static Leadership row(ResultSet rs, StatementContext context) throws SQLException {
        return new Leadership(rs.getString("holder"), rs.getLong("epoch"), instant(rs, "renewed_at"), instant(rs, "expires_at"));
    }
}
