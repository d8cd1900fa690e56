package io.slipstream.server;

import io.slipstream.store.Store;
import io.slipstream.store.StoreDamagedException;
import io.slipstream.store.StoreFiles;
import java.nio.file.Path;
import java.time.Clock;
import java.util.Optional;

/**
 * What a store passes before it is served, in order: it is the data directory's ({@link StoreIdentity}), it knows the
 * runs that ran here ({@link StoreHistory}, a store in the data directory only) and it has not gone back in time
 * ({@link StoreWatermark}). A store that is files is checked first as it is, opened to read: a store refused is left
 * exactly as it was found, for a restore or for inspection. Then, opened to write and migrated, the same checks
 * again, and what they record.
 */
final class StoreChecks {
    private StoreChecks() {
    }

    /**
     * Before the store is opened to write: its file is there if the data directory has history, and the store as it
     * is passes the checks.
     *
     * @throws StoreDamagedException if not
     */
    static void beforeOpening(StoreFiles files, Path dataDir, boolean accept, Clock clock) {
        EmbeddedStoreFile.check(files.file(), dataDir);
        Optional<Store> probe = files.openToCheck();
        if (probe.isEmpty()) {
            return;
        }
        try (Store asItIs = probe.get()) {
            String name = files.file().toString();
            if (StoreIdentity.of(asItIs).isEmpty()) {
                // This data directory's file without even an identity went back to its first moments (cut short after
                // a kill: H2 opens its newest whole chunk): said as the store that lost writes it is, with the restore.
                StoreWatermark.check(asItIs, dataDir, name, accept, clock, false);
            }
            StoreIdentity.check(asItIs, dataDir, clock, false);
            if (!accept) {
                StoreHistory.check(asItIs, dataDir, name, false, clock.instant());
            }
            StoreWatermark.check(asItIs, dataDir, name, accept, clock, false);
        }
    }

    /**
     * The store opened to write and migrated: checked, and what the checks record recorded (its identity, the
     * watermark advanced; with {@code accept}, the directories of runs it does not know set aside).
     *
     * @param files the store's files, if it is files in the data directory
     * @throws StoreDamagedException if the store may not be served
     */
    static void beforeServing(Store store, Optional<StoreFiles> files, String storeName, Path dataDir, boolean accept, Clock clock) {
        StoreIdentity.check(store, dataDir, clock); // before anything is written to a store that may be the wrong one
        if (files.isPresent()) {
            StoreHistory.check(store, dataDir, storeName, accept, clock.instant());
        }
        StoreWatermark.check(store, dataDir, storeName, accept, clock); // and before anything is written to one that lost writes
        StoreWatermark.accepted(dataDir);
    }
}
