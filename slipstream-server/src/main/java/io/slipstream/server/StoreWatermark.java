package io.slipstream.server;

import io.slipstream.store.ConflictException;
import io.slipstream.store.Store;
import io.slipstream.store.StoreDamagedException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.time.Clock;
import java.time.Duration;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Tells a store that went back in time. An embedded H2 file that was cut short, or a store replaced by an older copy,
 * opens without a word, with fewer runs than it had. So the store keeps a counter that only grows (with its identity,
 * under {@value #PURPOSE}), and the data directory records ({@value #FILE}) the value it has seen committed. The file
 * is written only after the store committed the value, so it may lag the store, never lead it: a store whose counter
 * is below the recorded one has lost writes. The counter grows at every start, every {@link #INTERVAL} while the
 * server runs and at every stop; what the store lost after the last recorded value goes unseen.
 */
public final class StoreWatermark {
    /** The file in the data directory with the highest counter value seen committed in its store. */
    public static final String FILE = "store.watermark";
    static final String PURPOSE = "store-watermark";
    /** The file that makes the next start accept an older store ({@link #acceptOlderStore}). */
    static final String ACCEPT = "store.accept-older";
    static final Duration INTERVAL = Duration.ofSeconds(10);
    private static final Logger LOG = LoggerFactory.getLogger(StoreWatermark.class);

    private StoreWatermark() {
    }

    /**
     * What the store's counter and the data directory's record say, decided: {@code null} if the store may be served,
     * else why not and what to do.
     */
    static String problem(long stored, OptionalLong recorded, Path file, String storeFile) {
        if (recorded.isEmpty() || stored >= recorded.getAsLong()) {
            return null;
        }
        return "the store " + storeFile + " holds fewer writes than this data directory has seen (" + stored + " < " + recorded.getAsLong()
                + ", recorded in " + file + "): it was truncated or replaced by an older copy, and runs acknowledged since are missing from it."
                + " It was not served. Restore the store from a backup with: slipstream store restore FILE --data-dir "
                + file.getParent() + "; or, knowingly accepting what it lost, start once with: slipstream server --accept-older-store";
    }

    /**
     * Refuses a store that went back in time, then advances its counter and records it.
     *
     * @param storeFile what to name in a refusal: the store's file, or its URL
     * @throws StoreDamagedException if the store's counter is below the data directory's record
     */
    public static long check(Store store, Path dataDir, String storeFile, boolean accept, Clock clock) {
        return check(store, dataDir, storeFile, accept, clock, true);
    }

    /** As {@link #check(Store, Path, String, boolean, Clock)}; with {@code write} false it only refuses (a store opened to read). */
    static long check(Store store, Path dataDir, String storeFile, boolean accept, Clock clock, boolean write) {
        Path file = dataDir.resolve(FILE);
        long stored = stored(store);
        String problem = accept ? null : problem(stored, recorded(file), file, storeFile);
        if (problem != null) {
            throw new StoreDamagedException(problem);
        }
        return write ? advance(store, dataDir, clock) : stored;
    }

    /** The counter in the store: 0 in one that has never had it. */
    static long stored(Store store) {
        Optional<String> value = store.credentials().serverKeyId(PURPOSE);
        if (value.isEmpty()) {
            return 0;
        }
        try {
            return Long.parseLong(value.get());
        } catch (NumberFormatException e) {
            throw new StoreDamagedException("the store's watermark (" + PURPOSE + ") is not a number: '" + value.get() + "'");
        }
    }

    /** Advances the store's counter (committed), then records the value in the data directory; returns it. */
    public static long advance(Store store, Path dataDir, Clock clock) {
        for (int attempt = 0; ; attempt++) {
            long current = stored(store);
            try {
                if (current == 0 && store.credentials().serverKeyId(PURPOSE).isEmpty()) {
                    store.commit(tx -> tx.registerServerKey(PURPOSE, "1", clock.instant()));
                } else {
                    store.commit(tx -> tx.replaceServerKey(PURPOSE, Long.toString(current), Long.toString(current + 1), clock.instant()));
                }
                record(dataDir, current + 1);
                return current + 1;
            } catch (ConflictException e) {
                if (attempt >= 10) {
                    throw e; // servers sharing a store advance it too; one of the next tries wins
                }
            }
        }
    }

    /** Records {@code value} in the data directory: whole (a new file, synced, renamed over the old one) or not at all. */
    static void record(Path dataDir, long value) {
        Path file = dataDir.resolve(FILE);
        Path temporary = dataDir.resolve(FILE + ".new");
        try {
            Files.deleteIfExists(temporary);
            try (FileChannel channel = FileChannel.open(temporary, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
                channel.write(StandardCharsets.UTF_8.encode(value + "\n"));
                channel.force(true);
            }
            Files.move(temporary, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot record the store's watermark in " + file, e);
        }
    }

    static OptionalLong recorded(Path file) {
        if (!Files.exists(file, LinkOption.NOFOLLOW_LINKS)) {
            return OptionalLong.empty();
        }
        String text;
        try {
            text = Files.readString(file, StandardCharsets.UTF_8).strip();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + file, e);
        }
        try {
            long value = Long.parseLong(text);
            if (value < 0) {
                throw new NumberFormatException();
            }
            return OptionalLong.of(value);
        } catch (NumberFormatException e) {
            throw new StoreDamagedException(file + " is not a watermark (it holds '" + text.substring(0, Math.min(text.length(), 40))
                    + "'): restore it from the backup of this data directory, or remove it if the store is the right one.");
        }
    }

    /**
     * Makes the next start that gets past the store's checks accept its store as it is, an operator's decision
     * ({@code --accept-older-store}): the watermark is not compared, and the directories of runs the store does not
     * know are set aside ({@link StoreHistory}).
     */
    public static void acceptOlderStore(Path dataDir) {
        try {
            Files.createDirectories(dataDir);
            Files.writeString(dataDir.resolve(ACCEPT), "the next start accepts the store as it is\n", StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + dataDir.resolve(ACCEPT), e);
        }
    }

    /** Whether the next start is to accept the store as it is ({@link #acceptOlderStore}). */
    static boolean accepting(Path dataDir) {
        return Files.exists(dataDir.resolve(ACCEPT), LinkOption.NOFOLLOW_LINKS);
    }

    /** The store was accepted, or the start that was to accept it failed: later starts check it again. */
    public static void accepted(Path dataDir) {
        try {
            Files.deleteIfExists(dataDir.resolve(ACCEPT));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot remove " + dataDir.resolve(ACCEPT), e);
        }
    }

    /** Advances the watermark while the server runs, and once more when it stops. */
    static final class Ticker implements AutoCloseable {
        private final Store store;
        private final Path dataDir;
        private final Clock clock;
        private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(runnable -> {
            Thread thread = new Thread(runnable, "slipstream-store-watermark");
            thread.setDaemon(true);
            return thread;
        });

        Ticker(Store store, Path dataDir, Clock clock) {
            this.store = store;
            this.dataDir = dataDir;
            this.clock = clock;
            timer.scheduleWithFixedDelay(this::tick, INTERVAL.toMillis(), INTERVAL.toMillis(), TimeUnit.MILLISECONDS);
        }

        private void tick() {
            try {
                advance(store, dataDir, clock);
            } catch (RuntimeException e) {
                LOG.warn("could not advance the store's watermark (the next tick tries again): {}", e.toString());
            }
        }

        /** Stops ticking and advances once more: a copy of the store taken before this stop is older than what is recorded. */
        @Override
        public void close() {
            timer.shutdownNow();
            try {
                timer.awaitTermination(5, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            tick();
        }
    }
}
