package io.slipstream.executor.local.uid;

import io.slipstream.executor.local.files.SystemCommand;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Removes what a run's uid left in the places every user may write ({@code /tmp}, {@code /var/tmp}, {@code /dev/shm},
 * {@code /dev/mqueue}, {@code /run/lock}) before the uid is given to another run, which would otherwise own those files. Done with
 * {@code find -xdev -uid U -delete}, which walks with {@code openat} and never follows a link. System V IPC objects
 * are not covered (see docs/security.md).
 */
public final class UidLeftovers {
    private static final Logger LOG = LoggerFactory.getLogger(UidLeftovers.class);
    /** Where a server looks. */
    public static final List<Path> SHARED_PLACES = List.of(Path.of("/tmp"), Path.of("/var/tmp"), Path.of("/dev/shm"), Path.of("/dev/mqueue"),
            Path.of("/run/lock"));
    private static final Duration TIMEOUT = Duration.ofMinutes(5);

    private final List<Path> places;

    public UidLeftovers(List<Path> places) {
        this.places = List.copyOf(places);
    }

    public void remove(int uid) {
        remove(uid, places);
    }

    /**
     * Removes what the uid left in those of the places that live in memory ({@code tmpfs}, {@code mqueue}): when a run
     * ends, not when its uid is given again (after its retention), for a file there holds memory that no limit of the
     * ended run counts any more, and runs one after the other could fill the machine's memory that way.
     */
    public void removeFromMemory(int uid) {
        remove(uid, places.stream().filter(UidLeftovers::inMemory).toList());
    }

    private static boolean inMemory(Path place) {
        try {
            String type = Files.getFileStore(place).type();
            return type.equals("tmpfs") || type.equals("mqueue") || type.equals("ramfs");
        } catch (IOException e) {
            return false; // not there
        }
    }

    private void remove(int uid, List<Path> where) {
        List<String> argv = new ArrayList<>(List.of("find"));
        where.stream().filter(Files::isDirectory).forEach(place -> argv.add(place.toString()));
        if (argv.size() == 1) {
            return;
        }
        argv.addAll(List.of("-xdev", "-uid", Integer.toString(uid), "-delete"));
        try {
            SystemCommand.Result find = SystemCommand.run(argv, TIMEOUT);
            if (!find.succeeded()) {
                // A directory of the uid's that holds another user's files stays; the rest is gone.
                LOG.debug("removing what uid {} left behind: {}", uid, find.output());
            }
        } catch (IOException e) {
            LOG.warn("cannot remove what uid {} left in shared places: {}", uid, e.getMessage());
        }
    }
}
