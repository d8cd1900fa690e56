package io.slipstream.server;

import io.slipstream.server.config.ConfigReader;
import io.slipstream.server.config.Plugins;
import io.slipstream.store.Store;
import io.slipstream.store.StoreDamagedException;
import io.slipstream.store.StoreFactory;
import io.slipstream.store.StoreFiles;
import io.slipstream.store.StoreSettings;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Clock;
import java.time.format.DateTimeFormatter;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.UUID;
import java.util.stream.Stream;

/**
 * Restores the embedded store of a data directory from a backup ({@code slipstream store backup}), with the server
 * stopped: the backup is unpacked beside the data directory's files, opened and checked like a server would, and only
 * then put in place, with the records of its identity and watermark, so that the server starts on it. A store that is
 * there already is set aside (never deleted), and only when asked to.
 */
public final class StoreRestore {
    /** What a restore did, for the operator. */
    /**
     * @param setAside        where the store that was there was moved, or {@code null}
     * @param unknownRuns     the runs with a directory in the data directory that the backup does not know (submitted after it)
     * @param unknownRunsDir  where their directories were moved, or {@code null}
     */
    public record Result(Path store, String identity, long watermark, Path setAside, List<String> unknownRuns, Path unknownRunsDir,
                         List<String> missingKeyFiles) {
    }

    /** Why a restore was refused: the message says what to do. */
    public static final class Refused extends RuntimeException {
        Refused(String message) {
            super(message);
        }
    }

    private StoreRestore() {
    }

    /**
     * What stands in the way of restoring into a data directory, decided; {@code null} if nothing does.
     *
     * @param inUse         whether a server holds the data directory's store
     * @param hasStore      whether the data directory has a store file
     * @param recordedId    the store identity the data directory records, or {@code null}
     * @param backupId      the identity of the backup's store
     */
    static String refusal(Path dataDir, Path storeFile, boolean inUse, boolean hasStore, String recordedId, String backupId, boolean force) {
        if (inUse) {
            return "a server is running on " + dataDir + " (its store is locked): stop it first";
        }
        if (force) {
            return null;
        }
        if (hasStore) {
            return dataDir + " has a store already (" + storeFile + "): restore into a new data"
                    + " directory, or pass --force to set that store aside (it is moved, never deleted) and restore in its place";
        }
        if (recordedId != null && !recordedId.equals(backupId)) {
            return dataDir + " belongs to the store " + recordedId + " (" + dataDir.resolve(StoreIdentity.FILE) + "), and this backup is of the store "
                    + backupId + ": restore into a new data directory, or pass --force to make this data directory the backup's";
        }
        return null;
    }

    /**
     * Restores {@code backup} into {@code dataDir} (made if missing).
     *
     * @throws Refused                  if a server holds the data directory, or it has a store or another store's history and
     *                                  {@code force} is not given
     * @throws IllegalArgumentException if {@code backup} is not a backup of a store
     */
    public static Result restore(Path backup, Path dataDir, boolean force, Clock clock) {
        Path target = dataDir.toAbsolutePath().normalize();
        StoreSettings settings = ConfigReader.defaults(target).store(); // the embedded store
        StoreFactory factory = Plugins.installed().storeOf(settings.store());
        StoreFiles files = factory.files(settings, () -> target)
                .orElseThrow(() -> new IllegalStateException("the store " + settings.store() + " is not files in the data directory"));
        if (!Files.isRegularFile(backup)) {
            throw new IllegalArgumentException("no such file: " + backup);
        }
        createDirectory(target);
        Path storeDir = files.directory();
        boolean hasStore = Files.exists(files.file(), LinkOption.NOFOLLOW_LINKS);
        String refused = refusal(target, files.file(), hasStore && files.inUse(), hasStore, null, null, force);
        if (refused != null) {
            throw new Refused(refused);
        }
        // Unpacked and checked where it is to go, as a data directory of its own, before anything of dataDir is touched.
        Path staging = target.resolve(".restore-" + UUID.randomUUID());
        try {
            createDirectory(staging);
            StoreFiles staged = factory.files(settings, () -> staging).orElseThrow();
            staged.extract(backup);
            String identity;
            long watermark;
            List<String> unknownRuns;
            try (Store store = openChecked(factory, settings, staged, staging)) {
                identity = StoreIdentity.check(store, staging, clock); // a backup from before identities is given one
                watermark = StoreWatermark.stored(store);
                // Runs that ran here after the backup: a start would take their directories for lost writes (StoreHistory).
                unknownRuns = StoreHistory.unknownRuns(target.resolve("instances"), id -> store.runs().get(id).isPresent(), Integer.MAX_VALUE);
            } catch (StoreDamagedException e) {
                throw new IllegalArgumentException(backup + " does not hold a whole store (" + e.getMessage() + ")");
            }
            StoreWatermark.record(staging, watermark);
            String recorded = recordedIdentity(target);
            refused = refusal(target, files.file(), false, false, recorded, identity, force);
            if (refused != null) {
                throw new Refused(refused);
            }
            Path aside = null;
            if (Files.exists(storeDir, LinkOption.NOFOLLOW_LINKS)) {
                if (files.inUse()) { // started meanwhile
                    throw new Refused(refusal(target, files.file(), true, true, null, null, force));
                }
                aside = target.resolve("store.before-restore-" + DateTimeFormatter.ofPattern("yyyyMMdd'T'HHmmss'Z'")
                        .withZone(ZoneOffset.UTC).format(clock.instant()));
                Files.move(storeDir, aside, StandardCopyOption.ATOMIC_MOVE);
                for (String record : List.of(StoreIdentity.FILE, StoreWatermark.FILE)) {
                    if (Files.exists(target.resolve(record), LinkOption.NOFOLLOW_LINKS)) {
                        Files.copy(target.resolve(record), aside.resolve(record));
                    }
                }
            }
            // The store, then its watermark, then its identity: a restore cut short between them is refused at start, and repeated.
            Files.move(staged.directory(), storeDir, StandardCopyOption.ATOMIC_MOVE);
            Files.move(staging.resolve(StoreWatermark.FILE), target.resolve(StoreWatermark.FILE), StandardCopyOption.ATOMIC_MOVE,
                    StandardCopyOption.REPLACE_EXISTING);
            Files.move(staging.resolve(StoreIdentity.FILE), target.resolve(StoreIdentity.FILE), StandardCopyOption.ATOMIC_MOVE,
                    StandardCopyOption.REPLACE_EXISTING);
            Path unknownRunsDir = StoreHistory.setAside(target.resolve("instances"), unknownRuns, clock.instant());
            List<String> missingKeys = new ArrayList<>();
            for (String key : List.of("secret.key", "token.pepper")) {
                if (!Files.exists(target.resolve(key), LinkOption.NOFOLLOW_LINKS)) {
                    missingKeys.add(key);
                }
            }
            return new Result(files.file(), identity, watermark, aside, unknownRuns, unknownRunsDir, missingKeys);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot restore " + backup + " into " + target + ": " + e.getMessage(), e);
        } finally {
            deleteTree(staging);
        }
    }

    /** The backup's store, read whole first (it is opened to write only then, and migrated). */
    private static Store openChecked(StoreFactory factory, StoreSettings settings, StoreFiles staged, Path staging) {
        staged.openToCheck().ifPresent(Store::close);
        return factory.create(settings, () -> staging);
    }

    private static String recordedIdentity(Path dataDir) throws IOException {
        Path file = dataDir.resolve(StoreIdentity.FILE);
        return Files.exists(file, LinkOption.NOFOLLOW_LINKS) ? Files.readString(file, StandardCharsets.UTF_8).strip() : null;
    }

    private static void createDirectory(Path dir) {
        try {
            if (!Files.isDirectory(dir)) {
                Files.createDirectories(dir.getParent());
                Files.createDirectory(dir, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create " + dir, e);
        }
    }

    private static void deleteTree(Path dir) {
        if (!Files.exists(dir, LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(dir)) {
            for (Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(path);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot remove " + dir, e);
        }
    }
}
