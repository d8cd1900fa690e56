package io.slipstream.executor.local.uid;

import io.slipstream.api.run.RunId;
import io.slipstream.executor.ExecutorException;
import io.slipstream.executor.local.files.LockFile;
import io.slipstream.executor.local.files.SafeFiles;
import io.slipstream.executor.local.files.Trash;
import io.slipstream.executor.local.process.ProcFs;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.BitSet;

/**
 * Gives every run a uid of its own, recorded in {@code <root>/<run>/uid} so that every attempt of the run, and a
 * restarted server, uses the same one. A uid is not given to a second run while the first one's directory exists
 * (also while it waits in the trash to be deleted), nor while any process runs under it.
 * Workspaces get a group id from the same range, recorded in {@code <storage>/<workspace>/gid} and kept for good, so
 * that the runs of a workspace share its storage and no other run can.
 */
public final class UidAllocator {
    private final Path root;
    private final Path storageRoot;
    private final Isolation isolation;
    private final BitSet used = new BitSet();
    /** Where the next id is looked for (kept in {@link #CURSOR}, so that a restart goes on where it was). */
    private int cursor;
    private static final String CURSOR = ".uid-cursor";
    /** Which run holds which uid, so that a uid can be freed after the run's files (and its uid file) are gone. */
    private final java.util.Map<RunId, Integer> given = new java.util.HashMap<>();
    private boolean runningMarked;
    private final Trash trash;
    /** Allocators of this process over one root take turns here, then processes on the lock of {@link #LOCK}. */
    private static final java.util.concurrent.ConcurrentHashMap<Path, Object> TURNS = new java.util.concurrent.ConcurrentHashMap<>();
    private static final String LOCK = ".uid-lock";
    /**
     * What this allocator last wrote to {@link #CURSOR}: found there again under the lock, no other allocator gave an
     * id since, and the uid files need not be read again (with thousands of runs kept, that read was most of a launch).
     */
    private String lastWritten;
    private long writes;
    private final String writer = Long.toHexString(new java.security.SecureRandom().nextLong());

    public UidAllocator(Path root, Path storageRoot, Isolation isolation, Trash trash) {
        this.root = root;
        this.storageRoot = storageRoot;
        this.isolation = isolation;
        this.trash = trash;
        markTaken(true);
        Integer saved = readCursor();
        cursor = saved == null || saved < 0 || saved > isolation.uidCount() ? 0 : saved;
    }

    /**
     * Marks every id that a run's or a workspace's file records as taken: at the start,
     * and again before each id is given, because replicas of the control plane on one machine share this root and
     * each has an allocator of its own (the one that takes over must not give an id the other gave meanwhile).
     *
     * @param holders also note which run holds which uid (at the start only: later, a released run's directory may
     *                still exist, and noting it again would keep its uid from ever being freed)
     */
    private void markTaken(boolean holders) {
        if (Files.isDirectory(storageRoot)) {
            try (DirectoryStream<Path> workspaces = Files.newDirectoryStream(storageRoot)) {
                for (Path workspace : workspaces) {
                    Integer gid = read(workspace.resolve("gid"));
                    if (gid != null && inRange(gid)) {
                        used.set(gid - isolation.firstUid());
                    }
                }
            } catch (IOException e) {
                throw new ExecutorException("cannot read " + storageRoot, e);
            }
        }
        try (DirectoryStream<Path> runs = Files.newDirectoryStream(root)) {
            for (Path run : runs) {
                Integer uid = read(run.resolve("uid"));
                if (uid != null && inRange(uid)) {
                    used.set(uid - isolation.firstUid());
                    if (holders && RunId.isValid(run.getFileName().toString())) {
                        given.put(new RunId(run.getFileName().toString()), uid);
                    }
                }
            }
        } catch (IOException e) {
            throw new ExecutorException("cannot read " + root, e);
        }
        try {
            for (Path trashed : trash.entries()) {
                Integer uid = read(trashed.resolve("uid"));
                if (uid != null && inRange(uid)) {
                    used.set(uid - isolation.firstUid());
                }
            }
        } catch (IOException e) {
            throw new ExecutorException("cannot read " + trash.dir(), e);
        }
    }

    /**
     * A uid of the range that something runs under is not free, whatever the files say. Looked at before the first
     * uid is given, not when the server starts: a scan of every process, which with hundreds of instances adopted
     * would hold up the start, and is no less true later. (Another replica's runs are in their uid files, read again
     * before each id is given.)
     */
    private void markRunning() {
        if (runningMarked) {
            return;
        }
        for (int uid : ProcFs.realUids()) {
            if (inRange(uid)) {
                used.set(uid - isolation.firstUid());
            }
        }
        runningMarked = true;
    }

    public synchronized int uidFor(RunId runId) {
        Path file = root.resolve(runId.value()).resolve("uid");
        Integer existing = read(file);
        if (existing != null) {
            if (!inRange(existing)) {
                throw new ExecutorException("run " + runId + " was given uid " + existing + ", outside this server's range "
                        + isolation.firstUid() + "+" + isolation.uidCount() + "; it cannot run again here");
            }
            given.put(runId, existing);
            return existing;
        }
        int uid = allocate(file, "run " + runId);
        given.put(runId, uid);
        return uid;
    }

    /** The group id of a workspace's storage, made on first use. */
    public synchronized int gidFor(String workspace) {
        Path file = storageRoot.resolve(workspace).resolve("gid");
        Integer existing = read(file);
        return existing != null ? existing : allocate(file, "workspace " + workspace);
    }

    /**
     * The next free id after the last one given, round the range: an id that was freed is given again only once every
     * other id of the range has been, so a new run of another team rarely gets a uid that ran before (and when it does,
     * what that uid left in shared places such as {@code /tmp} was removed when it was freed, see {@link UidLeftovers}).
     */
    private int allocate(Path file, String owner) {
        markRunning();
        synchronized (TURNS.computeIfAbsent(root.toAbsolutePath().normalize(), r -> new Object())) {
            try (LockFile ignored = LockFile.lock(root.resolve(LOCK))) {
                if (lastWritten == null || !lastWritten.equals(readString(root.resolve(CURSOR)))) {
                    markTaken(false); // what another replica's allocator gave since
                }
                Integer saved = readCursor();
                if (saved != null && saved >= 0 && saved <= isolation.uidCount()) {
                    cursor = saved;
                }
                return allocateLocked(file, owner);
            } catch (IOException e) {
                throw new ExecutorException("cannot lock " + root.resolve(LOCK) + " to give an id to " + owner + ": " + e.getMessage(), e);
            }
        }
    }

    private int allocateLocked(Path file, String owner) {
        int index = used.nextClearBit(cursor);
        if (index >= isolation.uidCount()) {
            index = used.nextClearBit(0);
        }
        if (index >= isolation.uidCount()) {
            throw new ExecutorException("every id of the range " + isolation.firstUid() + "+" + isolation.uidCount()
                    + " belongs to a run whose files still exist or to a workspace; widen instances.uidRange or remove old runs");
        }
        int id = isolation.firstUid() + index;
        // The cursor first: once another allocator finds it changed, it reads every uid file again, this one's too.
        String stamp = (index + 1) + " " + writer + "-" + (++writes) + "\n";
        lastWritten = null;
        try {
            SafeFiles.writeControlFile(root.resolve(CURSOR), stamp.getBytes(StandardCharsets.US_ASCII), "rw-------");
        } catch (IOException e) {
            throw new ExecutorException("cannot record the next id to give (" + root.resolve(CURSOR) + ") for " + owner, e);
        }
        lastWritten = stamp;
        try {
            Files.createDirectories(file.getParent());
            SafeFiles.writeControlFile(file, (id + "\n").getBytes(StandardCharsets.US_ASCII), "rw-r--r--");
        } catch (IOException e) {
            throw new ExecutorException("cannot record the id of " + owner, e);
        }
        used.set(index);
        cursor = index + 1;
        return id;
    }

    /** The cursor's position: the first word of its file (older servers wrote nothing else). */
    private Integer readCursor() {
        String text = readString(root.resolve(CURSOR));
        if (text == null || text.isBlank()) {
            return null;
        }
        try {
            return Integer.valueOf(text.trim().split("\\s+", 2)[0]);
        } catch (NumberFormatException e) {
            return null;
        }
    }

    private static String readString(Path file) {
        try {
            byte[] data = SafeFiles.readControlFile(file, 256);
            return data == null ? null : new String(data, StandardCharsets.US_ASCII);
        } catch (IOException e) {
            return null;
        }
    }

    /** The uid the run was given, if any (and if it is this server's to use). */
    public Integer uidOf(RunId runId) {
        Integer uid = read(root.resolve(runId.value()).resolve("uid"));
        return uid != null && inRange(uid) ? uid : null;
    }

    /** The run no longer holds its uid; the uid stays taken until {@link #free} (its files are gone). */
    public synchronized void release(RunId runId) {
        given.remove(runId);
    }

    /** Frees a uid whose files are all gone, unless a run holds it. */
    public synchronized void free(int uid) {
        if (inRange(uid) && !given.containsValue(uid)) {
            used.clear(uid - isolation.firstUid());
        }
    }

    /** Whether {@code uid} is this server's to give. */
    public boolean inRange(int uid) {
        return uid >= isolation.firstUid() && uid < isolation.firstUid() + isolation.uidCount();
    }

    /** The id a run's {@code uid} or a workspace's {@code gid} file records, or {@code null}. */
    public static Integer read(Path file) {
        return SafeFiles.readControlNumber(file);
    }
}
