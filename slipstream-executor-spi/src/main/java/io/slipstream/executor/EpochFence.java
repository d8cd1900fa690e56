package io.slipstream.executor;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Set;
import java.util.function.Supplier;

/**
 * The newest leader epoch of every executor that shares this root (replicas of the control plane on one machine or
 * one shared file system), in a file only the server can write ({@code <root>/.fence}, 0600). {@link #fence} moves it
 * forward under an exclusive lock on the file; every side effect runs {@link #guarded}: under a shared lock on it,
 * refused if a newer epoch was written since this executor was fenced. So a leader that was paused past its lease,
 * and woke up to find another one leading, launches and kills nothing, even if its store writes had not failed yet;
 * and the side effects of one leader (many launches at once) do not wait for one another.
 */
public final class EpochFence {
    private static final Set<java.nio.file.OpenOption> OPEN = Set.of(StandardOpenOption.CREATE, StandardOpenOption.READ,
            StandardOpenOption.WRITE, LinkOption.NOFOLLOW_LINKS);

    private final Path file;
    /**
     * A {@link FileLock} is held per process (a second one of the same JVM on the file throws): every executor of this
     * process over the same root shares one {@link Turns}. Side effects hold its read lock and, while any does, one
     * shared file lock; a fence holds its write lock, then the file's exclusive lock.
     */
    private static final java.util.concurrent.ConcurrentHashMap<Path, Turns> TURNS = new java.util.concurrent.ConcurrentHashMap<>();
    private final Turns turns;
    /** The epoch this executor acts for; 0 until it is fenced (then it acts only while no one fenced). */
    private volatile long epoch;

    /**
     * How long a fence or a side effect waits for another process's turn on the file: longer than any side effect
     * holds it (a launch waits up to 10 s for its supervisor). A replica frozen while it held the lock (SIGSTOP, a
     * stalled VM) must not freeze its successor's takeover, nor through it that replica's election and shutdown.
     */
    public static final java.time.Duration LOCK_WAIT = java.time.Duration.ofSeconds(20);

    private final java.time.Duration lockWait;

    public EpochFence(Path root) {
        this(root, LOCK_WAIT);
    }

    public EpochFence(Path root, java.time.Duration lockWait) {
        this.file = root.resolve(".fence").toAbsolutePath().normalize();
        this.turns = TURNS.computeIfAbsent(file, f -> new Turns());
        this.lockWait = lockWait;
    }

    /** Acts for {@code newEpoch} from now on; refused if a newer one fenced already. */
    public void fence(long newEpoch) {
        java.util.concurrent.locks.Lock alone = turns.rw.writeLock();
        take(alone);
        try (FileChannel channel = open(); FileLock ignored = acquire(channel, false)) {
            long current = read(channel);
            if (current > newEpoch) {
                throw new io.slipstream.executor.EpochSupersededException(newEpoch, current, file.toString());
            }
            channel.truncate(0);
            channel.write(ByteBuffer.wrap((newEpoch + "\n").getBytes(StandardCharsets.US_ASCII)), 0);
            channel.force(true);
            epoch = newEpoch;
        } catch (IOException e) {
            throw new ExecutorException("cannot read the leader epoch in " + file + ": " + e.getMessage(), e);
        } finally {
            alone.unlock();
        }
    }

    /**
     * Runs {@code effect} unless a newer epoch fenced: the check and the effect under one (shared) lock, so that no
     * fence comes between them.
     */
    public <T> T guarded(Supplier<T> effect) {
        java.util.concurrent.locks.Lock shared = turns.rw.readLock();
        take(shared);
        try {
            long current = enterShared();
            try {
                requireCurrent(current);
                return effect.get();
            } finally {
                leaveShared();
            }
        } catch (IOException e) {
            throw new ExecutorException("cannot read the leader epoch in " + file + ": " + e.getMessage(), e);
        } finally {
            shared.unlock();
        }
    }

    /** The epoch this executor acts for (0: never fenced). */
    public long epoch() {
        return epoch;
    }

    /** Refuses at once if a newer epoch fenced (for effects that need no lock of their own). */
    public void check() {
        guarded(() -> {
        });
    }

    public void guarded(Runnable effect) {
        guarded(() -> {
            effect.run();
            return null;
        });
    }

    /** Thrown by {@link #guarded} when a newer epoch fenced: nothing was done, and this executor never will again. */
    public static final class Fenced extends ExecutorException {
        Fenced(String message) {
            super(message);
        }
    }

    private void requireCurrent(long current) {
        if (current > epoch) {
            throw new Fenced("fenced: this executor acts for epoch " + epoch + ", but epoch " + current
                    + " has taken over (this replica lost its lease); nothing was started or stopped");
        }
    }

    /**
     * This process's turns on one fence file; {@code channel} and {@code lock} are open while {@code holders > 0}, and
     * {@code epoch} is the file's epoch then: no fence can move it while the shared lock is held, so it is read once,
     * by the first holder (a read by each would close the channel, and drop the lock for all, when one was interrupted).
     */
    private static final class Turns {
        /** Fair: a fence waiting is not passed by side effects that come after it. */
        final java.util.concurrent.locks.ReentrantReadWriteLock rw = new java.util.concurrent.locks.ReentrantReadWriteLock(true);
        int holders;
        FileChannel channel;
        FileLock lock;
        long epoch;
    }

    /**
     * The shared file lock, taken by the first side effect of this process that runs now, kept until the last ends;
     * returns the file's epoch.
     */
    private long enterShared() throws IOException {
        synchronized (turns) {
            if (turns.holders == 0) {
                FileChannel channel = open();
                try {
                    turns.lock = acquire(channel, true);
                    turns.epoch = read(channel);
                } catch (IOException | RuntimeException e) {
                    channel.close();
                    turns.lock = null;
                    throw e;
                }
                turns.channel = channel;
            }
            turns.holders++;
            return turns.epoch;
        }
    }

    private void leaveShared() {
        synchronized (turns) {
            if (--turns.holders == 0) {
                try {
                    turns.lock.release();
                    turns.channel.close();
                } catch (IOException e) {
                    // closing the channel releases the lock whatever happens
                } finally {
                    turns.lock = null;
                    turns.channel = null;
                }
            }
        }
    }

    private FileChannel open() throws IOException {
        return FileChannel.open(file, OPEN, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
    }

    /** Takes a lock of this process's turns, waiting at most {@link #lockWait}. */
    private void take(java.util.concurrent.locks.Lock lock) {
        try {
            if (!lock.tryLock(lockWait.toNanos(), java.util.concurrent.TimeUnit.NANOSECONDS)) {
                throw new ExecutorException("the leader epoch in " + file + " has been in use by this process for over " + lockWait.toSeconds()
                        + " s (a launch or stop that hangs?); nothing was done");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new ExecutorException("interrupted while waiting for the lock of " + file, e);
        }
    }

    /** The file's lock, waited for at most {@link #lockWait} (polled: {@link FileChannel#lock} cannot be given a timeout). */
    private FileLock acquire(FileChannel channel, boolean shared) throws IOException {
        long deadline = System.nanoTime() + lockWait.toNanos();
        while (true) {
            FileLock lock = channel.tryLock(0, Long.MAX_VALUE, shared);
            if (lock != null) {
                return lock;
            }
            if (System.nanoTime() - deadline > 0) {
                throw new ExecutorException(file + " has been locked by another process for over " + lockWait.toSeconds()
                        + " s (a replica frozen while it launched or stopped an instance?); nothing was done");
            }
            try {
                Thread.sleep(10);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new ExecutorException("interrupted while waiting for the lock of " + file, e);
            }
        }
    }

    private static long read(FileChannel channel) throws IOException {
        ByteBuffer buffer = ByteBuffer.allocate(32);
        channel.read(buffer, 0);
        String text = new String(buffer.array(), 0, buffer.position(), StandardCharsets.US_ASCII).trim();
        if (text.isEmpty()) {
            return 0;
        }
        try {
            return Long.parseLong(text);
        } catch (NumberFormatException e) {
            throw new IOException("it holds '" + text + "', not an epoch");
        }
    }
}
