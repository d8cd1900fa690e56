package io.slipstream.store.memory;

import static io.slipstream.store.memory.Stored.micros;

import io.slipstream.store.Leadership;
import io.slipstream.store.Leases;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;

/**
 * The leadership of an {@link InMemoryStore} (the JDBC store's {@code LeadershipRows}): the lease here, apart from the
 * snapshots, and the fence (its epoch) in the {@link Tables}. Several control loops of one process may share this store
 * (tests of fencing): a lease is waited out. A renewal changes only the lease, so it never waits for the leader's open
 * transactions; a new epoch is a write of the fence, so it waits for them (the writer lock), and no transaction of the
 * old epoch is open once it is in place. The fence is checked by the transactions themselves ({@link InMemoryTx#requireLeader}).
 */
final class InMemoryLeases implements Leases {
    private final Snapshots snapshots;
    private final Object lock = new Object();
    private volatile Leadership lease;

    InMemoryLeases(Snapshots snapshots) {
        this.snapshots = snapshots;
    }

    @Override
    public Leadership claim(String holder, String goneHolder, Instant now, Duration ttl) {
        snapshots.requireOutside();
        synchronized (lock) {
            Leadership current = lease;
            if (current != null && current.heldBy(holder) && !current.expiredAt(now)) {
                snapshots.requireOpen(); // one check per call, as inTransaction's below (tests count calls to an outage)
                lease = new Leadership(holder, current.epoch(), micros(now), micros(now.plus(ttl)));
                return lease;
            }
            if (current != null && !current.expiredAt(now) && !current.heldBy(goneHolder)) {
                snapshots.requireOpen();
                return current;
            }
        }
        return snapshots.inTransaction(t -> {
            synchronized (lock) { // taken after the writer lock, never before: a renewal holds only this one
                Leadership current = lease;
                boolean renew = current != null && current.heldBy(holder) && !current.expiredAt(now);
                if (current != null && !renew && !current.expiredAt(now) && !current.heldBy(goneHolder)) {
                    return current; // another claim won the lease while this one waited
                }
                long epoch = current == null ? 1 : renew ? current.epoch() : current.epoch() + 1;
                t.fenceEpoch = epoch;
                lease = new Leadership(holder, epoch, micros(now), micros(now.plus(ttl)));
                return lease;
            }
        });
    }

    @Override
    public Optional<Leadership> current() {
        snapshots.requireOutside();
        snapshots.requireOpen();
        return Optional.ofNullable(lease);
    }

    @Override
    public Leadership advanceEpoch(String holder, long epoch, long past) {
        return snapshots.inTransaction(t -> {
            synchronized (lock) {
                Leadership current = lease;
                if (current != null && current.heldBy(holder) && current.epoch() == epoch && past >= epoch) {
                    t.fenceEpoch = past + 1;
                    lease = new Leadership(holder, past + 1, current.renewedAt(), current.expiresAt());
                }
                return lease;
            }
        });
    }

    @Override
    public void release(String holder, long epoch, Instant now) {
        snapshots.requireOutside();
        snapshots.requireOpen();
        synchronized (lock) {
            Leadership current = lease;
            if (current != null && current.heldBy(holder) && current.epoch() == epoch) {
                lease = new Leadership(holder, epoch, current.renewedAt(), micros(now));
            }
        }
    }
}
