package io.slipstream.server;

import io.slipstream.api.run.RunId;
import io.slipstream.store.Store;
import io.slipstream.store.StoreDamagedException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.FileTime;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Tells a store that lost runs from the data directory's own record of them: a run's directory under
 * {@code instances/} is made only after the store committed the run's admission, and removed (by retention) before the
 * run is deleted from the store. So a run directory whose run the store does not know means the store lost writes:
 * it was cut short or replaced by an older copy. Unlike the watermark this has no lag: every run that ran is
 * counted. It holds for a store in the data directory only (the embedded one): runs of a store shared by several
 * servers live in each server's data directory.
 */
final class StoreHistory {
    /** The newest run directories looked at: a store that lost writes lost the newest ones. */
    static final int NEWEST = 200;
    private static final Logger LOG = LoggerFactory.getLogger(StoreHistory.class);

    private StoreHistory() {
    }

    /** Why the store may not be served, decided from the runs it does not know; {@code null} if it knows them all. */
    static String problem(List<String> unknown, String storeFile, Path instances) {
        if (unknown.isEmpty()) {
            return null;
        }
        List<String> named = unknown.subList(0, Math.min(unknown.size(), 5));
        return "the store " + storeFile + " holds fewer writes than this data directory has seen: it does not know " + unknown.size()
                + " run(s) that ran here (" + String.join(", ", named) + (unknown.size() > named.size() ? ", ..." : "") + ", in " + instances
                + "): it was truncated or replaced by an older copy. It was not served. Restore the store from a backup with: slipstream"
                + " store restore FILE --data-dir " + instances.getParent() + "; or, knowingly accepting what it lost, start once with:"
                + " slipstream server --accept-older-store (the directories of those runs are then set aside)";
    }

    /** The runs of the {@code newest} run directories under {@code instances} that {@code known} does not know, newest first. */
    static List<String> unknownRuns(Path instances, Predicate<RunId> known, int newest) {
        if (!Files.isDirectory(instances, LinkOption.NOFOLLOW_LINKS)) {
            return List.of();
        }
        List<Map.Entry<String, FileTime>> runs = new ArrayList<>();
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(instances, entry -> RunId.isValid(entry.getFileName().toString()))) {
            for (Path entry : entries) {
                if (Files.isDirectory(entry, LinkOption.NOFOLLOW_LINKS)) {
                    runs.add(Map.entry(entry.getFileName().toString(), Files.getLastModifiedTime(entry, LinkOption.NOFOLLOW_LINKS)));
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + instances, e);
        }
        runs.sort(Map.Entry.<String, FileTime>comparingByValue(Comparator.reverseOrder()).thenComparing(Map.Entry.comparingByKey()));
        List<String> unknown = new ArrayList<>();
        for (Map.Entry<String, FileTime> run : runs.subList(0, Math.min(runs.size(), newest))) {
            if (!known.test(new RunId(run.getKey()))) {
                unknown.add(run.getKey());
            }
        }
        return unknown;
    }

    /**
     * Refuses a store that does not know runs of this data directory, unless {@code accept}: then their directories
     * are set aside (moved under {@code instances/.set-aside-<time>/}, never deleted) and the store is served.
     */
    static void check(Store store, Path dataDir, String storeFile, boolean accept, Instant now) {
        Path instances = dataDir.resolve("instances");
        List<String> unknown = unknownRuns(instances, id -> store.runs().get(id).isPresent(), accept ? Integer.MAX_VALUE : NEWEST);
        if (!accept) {
            String problem = problem(unknown, storeFile, instances);
            if (problem != null) {
                throw new StoreDamagedException(problem);
            }
            return;
        }
        Path aside = setAside(instances, unknown, now);
        if (aside != null) {
            LOG.warn("the store does not know {} run(s) that ran here; accepted (--accept-older-store): their directories are in {}", unknown.size(), aside);
        }
    }

    /** Moves the directories of these runs to {@code instances/.set-aside-<time>/}; returns it, or {@code null} if none. */
    static Path setAside(Path instances, List<String> runs, Instant now) {
        if (runs.isEmpty()) {
            return null;
        }
        Path aside = instances.resolve(".set-aside-" + DateTimeFormatter.ofPattern("yyyyMMdd'T'HHmmss'Z'").withZone(ZoneOffset.UTC).format(now));
        try {
            Files.createDirectories(aside);
            for (String run : runs) {
                Files.move(instances.resolve(run), aside.resolve(run), StandardCopyOption.ATOMIC_MOVE);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot set aside the directories of runs the store does not know in " + aside, e);
        }
        return aside;
    }
}
