package io.slipstream.store.jdbc;

import io.slipstream.store.ConflictException;
import io.slipstream.store.Leadership;
import io.slipstream.store.Leases;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;

/** {@link Leases} over {@link LeadershipRows}: each call a transaction of its own. */
final class JdbcLeases implements Leases {
    private final Transactions transactions;
    /** Only one process can open this store (the embedded H2 file is locked): a previous leader cannot be alive. */
    private final boolean singleProcess;

    JdbcLeases(Transactions transactions, boolean singleProcess) {
        this.transactions = transactions;
        this.singleProcess = singleProcess;
    }

    @Override
    public Leadership claim(String holder, String goneHolder, Instant now, Duration ttl) {
        try {
            return transactions.inTransaction(tx -> tx.with(h -> LeadershipRows.claim(h, holder, goneHolder, now, ttl, singleProcess)));
        } catch (ConflictException e) {
            return current().orElseThrow(() -> e); // another replica's first claim won the race: it leads
        }
    }

    @Override
    public Optional<Leadership> current() {
        return transactions.withHandle(LeadershipRows::find);
    }

    @Override
    public Leadership advanceEpoch(String holder, long epoch, long past) {
        return transactions.inTransaction(tx -> tx.with(h -> LeadershipRows.advance(h, holder, epoch, past)));
    }

    @Override
    public void release(String holder, long epoch, Instant now) {
        transactions.withHandle(h -> LeadershipRows.release(h, holder, epoch, now));
    }
}
