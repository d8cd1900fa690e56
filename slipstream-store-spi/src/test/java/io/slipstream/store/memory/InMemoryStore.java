package io.slipstream.store.memory;

import io.slipstream.store.ConflictException;
import io.slipstream.store.CredentialReads;
import io.slipstream.store.DocumentReads;
import io.slipstream.store.Leases;
import io.slipstream.store.RunReads;
import io.slipstream.store.Store;
import io.slipstream.store.StoreReads;
import io.slipstream.store.StoreTx;
import io.slipstream.store.UsageReads;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;

/**
 * The {@link Store} in memory, for tests: nothing survives the process, and a test can cut it off
 * ({@link #simulateOutage}). It keeps every rule of the JDBC store ({@code JdbcStore}) that {@code BaseStoreContractTest}
 * holds both to: versions and {@link ConflictException}s, idempotency keys unique per workspace, events numbered by one
 * sequence, fields that never change after a create, text shortened where a column would, and times kept to the
 * microsecond (like a {@code TIMESTAMP WITH TIME ZONE} column).
 *
 * <p>Each table's rules are a {@code *Table} class of static functions over the {@link Tables} (as the JDBC store's
 * are {@code *Rows} classes over a handle); the facets bind them to its {@link Snapshots}: the reads
 * ({@link InMemoryReads}) to the committed tables, a transaction ({@link InMemoryTx}) to its private copy
 * ({@link Working}), published at its end; readers never wait and never see a transaction half done, writers take turns.
 */
public final class InMemoryStore implements Store {
    /** How long a writer waits for another thread's transaction before it gives up (as a database's lock timeout). */
    public static final Duration LOCK_TIMEOUT = Duration.ofSeconds(10);

    private final Snapshots snapshots;
    private final InMemoryReads reads;
    private final InMemoryLeases leases;
    /** The events' sequence: numbers taken by a rolled-back transaction are not reused, as with a database sequence. */
    private final AtomicLong eventSeq = new AtomicLong();

    public InMemoryStore() {
        this(LOCK_TIMEOUT);
    }

    /** A store whose writers wait {@code lockTimeout} for another thread's transaction (its contract test waits it out). */
    public InMemoryStore(Duration lockTimeout) {
        this.snapshots = new Snapshots(lockTimeout);
        this.reads = new InMemoryReads(snapshots::read);
        this.leases = new InMemoryLeases(snapshots);
    }

    /**
     * Makes every call fail as a database outage would ({@code true}) or work again: for tests of what callers do
     * while the store cannot be reached. Nothing is lost meanwhile.
     */
    public void simulateOutage(boolean on) {
        snapshots.outage(on);
    }

    /** Lets {@code calls} more calls through, then fails every call as {@link #simulateOutage} does: an outage mid-work. */
    public void simulateOutageAfter(int calls) {
        snapshots.outageAfter(calls);
    }

    @Override
    public void close() {
        snapshots.close();
    }

    @Override
    public <T> T write(Function<StoreTx, T> work) {
        return snapshots.inTransaction(tables -> {
            Working working = new Working(snapshots, tables);
            try {
                return work.apply(new InMemoryTx(working, eventSeq));
            } finally {
                working.end();
            }
        });
    }

    @Override
    public <T> T read(Function<StoreReads, T> work) {
        return snapshots.view(tables -> {
            Working view = new Working(snapshots, tables);
            try {
                return work.apply(new InMemoryReads(view));
            } finally {
                view.end();
            }
        });
    }

    @Override
    public RunReads runs() {
        return reads.runs();
    }

    @Override
    public DocumentReads documents() {
        return reads.documents();
    }

    @Override
    public CredentialReads credentials() {
        return reads.credentials();
    }

    @Override
    public UsageReads usage() {
        return reads.usage();
    }

    @Override
    public Leases leases() {
        return leases;
    }

    @Override
    public void ping() {
        snapshots.read();
    }
}
