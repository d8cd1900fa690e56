package io.slipstream.executor.local;

import io.slipstream.api.run.RunId;
import io.slipstream.executor.ExecutorException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.BitSet;

/**
 * Gives every run a uid of its own, recorded in {@code <root>/<run>/uid} so that every attempt of the run, and a
 * restarted server, uses the same one. A uid is not given to a second run while the first one's directory exists.
 */
final class UidAllocator {
    private final Path root;
    private final Isolation isolation;
    private final BitSet used = new BitSet();
    /** Which run holds which uid, so that a uid can be freed after the run's files (and its uid file) are gone. */
    private final java.util.Map<RunId, Integer> given = new java.util.HashMap<>();

    UidAllocator(Path root, Isolation isolation) {
        this.root = root;
        this.isolation = isolation;
        try (DirectoryStream<Path> runs = Files.newDirectoryStream(root)) {
            for (Path run : runs) {
                Integer uid = read(run.resolve("uid"));
                if (uid != null && inRange(uid)) {
                    used.set(uid - isolation.firstUid());
                    if (RunId.isValid(run.getFileName().toString())) {
                        given.put(new RunId(run.getFileName().toString()), uid);
                    }
                }
            }
        } catch (IOException e) {
            throw new ExecutorException("cannot read " + root, e);
        }
    }

    synchronized int uidFor(RunId runId) {
        Path file = root.resolve(runId.value()).resolve("uid");
        Integer existing = read(file);
        if (existing != null) {
            given.put(runId, existing);
            return existing;
        }
        int index = used.nextClearBit(0);
        if (index >= isolation.uidCount()) {
            throw new ExecutorException("every uid of the range " + isolation.firstUid() + "+" + isolation.uidCount()
                    + " belongs to a run whose files still exist; widen instances.uidRange or remove old runs");
        }
        int uid = isolation.firstUid() + index;
        try {
            Files.createDirectories(file.getParent());
            Files.writeString(file, uid + "\n", StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new ExecutorException("cannot record the uid of run " + runId, e);
        }
        used.set(index);
        given.put(runId, uid);
        return uid;
    }

    /** The uid the run was given, if any. */
    Integer uidOf(RunId runId) {
        return read(root.resolve(runId.value()).resolve("uid"));
    }

    /** Frees the run's uid for another run once its directory is gone. */
    synchronized void release(RunId runId) {
        Path file = root.resolve(runId.value()).resolve("uid");
        if (Files.exists(file)) {
            return; // its files are still there: the uid still owns them
        }
        Integer uid = given.remove(runId);
        if (uid != null && inRange(uid)) {
            used.clear(uid - isolation.firstUid());
        }
    }

    private boolean inRange(int uid) {
        return uid >= isolation.firstUid() && uid < isolation.firstUid() + isolation.uidCount();
    }

    private static Integer read(Path file) {
        try {
            return Integer.valueOf(Files.readString(file, StandardCharsets.UTF_8).trim());
        } catch (IOException | NumberFormatException e) {
            return null;
        }
    }
}
