package io.slipstream.executor.local;

import io.slipstream.api.run.RunId;
import io.slipstream.executor.ExecutorException;
import io.slipstream.executor.local.files.Trash;
import io.slipstream.executor.local.process.ProcFs;
import io.slipstream.executor.local.storage.SharedStorage;
import io.slipstream.executor.local.uid.UidAllocator;
import io.slipstream.executor.local.uid.UidLeftovers;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Removes what is kept of finished runs: their instances' directories and run-scoped storage go into the
 * {@link Trash} at once (a rename each), and are deleted from there later; a run's uid is free once they are gone.
 */
final class RunFiles {
    private static final Logger LOG = LoggerFactory.getLogger(RunFiles.class);

    private final Path root;
    private final SharedStorage storage;
    private final Trash trash;
    private final Trash storageTrash;
    private final UidAllocator uids;
    private final UidLeftovers leftovers;

    /**
     * @param trash        for instance directories, on their file system
     * @param storageTrash for run-scoped storage, on the storage's file system (so that taking it is a rename too)
     * @param uids         the run uids, or {@code null} without isolation
     * @param leftovers    removes what a freed uid left in shared places
     */
    RunFiles(Path root, SharedStorage storage, Trash trash, Trash storageTrash, UidAllocator uids, UidLeftovers leftovers) {
        this.root = root;
        this.storage = storage;
        this.trash = trash;
        this.storageTrash = storageTrash;
        this.uids = uids;
        this.leftovers = leftovers;
    }

    /**
     * Takes a finished run's files out of the way. Refused while a process of the run's uid is left (one that escaped
     * every instance's end is killed then, and the next call goes on).
     */
    void remove(RunId runId) {
        Path dir = root.resolve(runId.value()).normalize();
        if (!dir.startsWith(root) || dir.equals(root)) {
            throw new ExecutorException("run directory " + dir + " is outside " + root);
        }
        Integer uid = uids == null ? null : uids.uidOf(runId);
        if (uid != null) {
            List<Long> escaped = ProcFs.ownedBy(uid);
            if (!escaped.isEmpty()) {
                escaped.forEach(pid -> ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly));
                throw new ExecutorException(escaped.size() + " process(es) of run " + runId + " (uid " + uid
                        + ") outlived it and were killed; its files go once they are gone");
            }
        }
        try {
            if (Files.exists(dir, LinkOption.NOFOLLOW_LINKS)) {
                trash.take(dir, runId.value());
            }
            storage.forgetRun(runId, storageTrash);
        } catch (IOException e) {
            throw new ExecutorException("cannot remove the files of run " + runId + ": " + e.getMessage(), e);
        }
        if (uids != null) {
            uids.release(runId); // its uid stays taken until its files are gone from the trash
        }
    }

    /** Deletes what waits in the trash, freeing each run's uid once its files are gone. */
    synchronized void emptyTrash() {
        for (Trash bin : List.of(storageTrash, trash)) { // a run's uid file is in the second: its storage goes first
            empty(bin);
        }
    }

    private void empty(Trash bin) {
        List<Path> entries;
        try {
            entries = bin.entries();
        } catch (IOException e) {
            LOG.warn("cannot list {}: {}", bin.dir(), e.getMessage());
            return;
        }
        for (Path entry : entries) { // one that cannot go now is tried again next time; the others go
            try {
                Integer uid = UidAllocator.read(entry.resolve("uid"));
                bin.delete(entry);
                if (uid != null && uids != null && uids.inRange(uid)) {
                    leftovers.remove(uid);
                    uids.free(uid);
                }
            } catch (IOException | RuntimeException e) {
                LOG.warn("cannot delete {} yet: {}", entry, e.getMessage());
            }
        }
    }
}
