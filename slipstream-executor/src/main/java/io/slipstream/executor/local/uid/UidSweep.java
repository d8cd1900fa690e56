package io.slipstream.executor.local.uid;

import io.slipstream.executor.local.process.ProcFs;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Kills every process of a run's uid, wherever it went: a daemon that left its instance's session and process group
 * (double fork, {@code setsid}) is in no process tree the executor follows, but it still has the run's uid. The server
 * sends SIGKILL itself, process by process ({@code /proc} tells which have the uid as their real uid), round after round
 * until none is left: nothing of it runs as the uid, so nothing of the run can stop or outlive it (a SIGKILL reaches a
 * stopped process too). Bounded: after {@link #PATIENCE} it gives up, loudly (a process stuck in the kernel).
 *
 * <p>A pass over {@code /proc} reads the status of every process of the machine, so its cost grows with what runs
 * (four processes per running instance). Sweeps asked for at the same time share passes: one thread sweeps at a
 * time, for every uid asked for before it started; the others wait for it, and a uid asked for while a sweep is under
 * way is swept by the next one (a pass that began before the ask could have missed what the uid started since).
 */
public final class UidSweep {
    private static final Logger LOG = LoggerFactory.getLogger(UidSweep.class);
    static final Duration PATIENCE = Duration.ofSeconds(20);

    /** One ask: its uid, and once swept, how many of its processes were killed. */
    private static final class Ask {
        final int uid;
        volatile Integer killed;

        Ask(int uid) {
            this.uid = uid;
        }
    }

    final ConcurrentLinkedQueue<Ask> asked = new ConcurrentLinkedQueue<>();
    final ReentrantLock sweeping = new ReentrantLock();
    /** Sweeps done (each for every uid asked for before it): a test sees asks share them. */
    volatile int sweeps;

    /** Returns once no live process has {@code uid} as its real uid, or after {@link #PATIENCE}; how many processes it killed. */
    public int killAll(int uid) {
        Ask ask = new Ask(uid);
        asked.add(ask);
        sweeping.lock();
        try {
            if (ask.killed == null) {
                // Its own ask too: a sweep that took it from the queue may have failed (an exception is its thread's).
                List<Ask> batch = new ArrayList<>(List.of(ask));
                for (Ask next = asked.poll(); next != null; next = asked.poll()) {
                    batch.add(next);
                }
                Map<Integer, Integer> killed = sweep(batch.stream().map(a -> a.uid).collect(java.util.stream.Collectors.toSet()));
                sweeps++;
                batch.forEach(a -> a.killed = killed.getOrDefault(a.uid, 0));
            }
            return ask.killed;
        } finally {
            sweeping.unlock();
        }
    }

    private static Map<Integer, Integer> sweep(Set<Integer> uids) {
        long deadline = System.nanoTime() + PATIENCE.toNanos();
        long pause = 1;
        boolean interrupted = false;
        Map<Integer, Set<Long>> killed = new HashMap<>(); // a process signalled in one round may still be there in the next
        for (Map<Integer, List<Long>> left = ProcFs.ownedBy(uids); !left.isEmpty(); left = ProcFs.ownedBy(new HashSet<>(left.keySet()))) {
            // A pid is only reused once the pid space wraps around; it cannot between this scan and the signal.
            left.forEach((uid, pids) -> {
                pids.forEach(pid -> ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly));
                killed.computeIfAbsent(uid, key -> new HashSet<>()).addAll(pids);
            });
            if (System.nanoTime() > deadline) {
                left.forEach((uid, pids) -> LOG.error("{} process(es) of uid {} survive SIGKILL after {} s (stuck in the kernel?); giving up on them",
                        pids.size(), uid, PATIENCE.toSeconds()));
                break;
            }
            try {
                Thread.sleep(pause);
            } catch (InterruptedException e) {
                interrupted = true; // the sweep is others' too: it goes on, bounded by its patience
            }
            pause = Math.min(pause * 2, 100);
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
        Map<Integer, Integer> counts = new HashMap<>();
        killed.forEach((uid, pids) -> counts.put(uid, pids.size()));
        return counts;
    }
}
