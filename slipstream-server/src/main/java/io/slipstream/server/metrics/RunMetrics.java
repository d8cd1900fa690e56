package io.slipstream.server.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.slipstream.api.run.QuotaId;
import io.slipstream.api.run.RunId;
import io.slipstream.model.RunRecord;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Counts what this replica did to runs (admissions, preemptions, restarts, work lost, ends), from the runs it writes:
 * each write is compared with the run as last known ({@link RunChanges}). Runs it only reads are remembered, never
 * counted, so that replicas over one store do not count each other's work twice.
 */
final class RunMetrics {
    static final String NO_QUOTA = "(none)";
    private static final Duration[] WAIT_BUCKETS = {Duration.ofSeconds(1), Duration.ofSeconds(5), Duration.ofSeconds(15), Duration.ofSeconds(30),
            Duration.ofMinutes(1), Duration.ofMinutes(2), Duration.ofMinutes(5), Duration.ofMinutes(10), Duration.ofMinutes(30), Duration.ofHours(1),
            Duration.ofHours(3), Duration.ofHours(6), Duration.ofHours(12), Duration.ofDays(1)};

    private final MeterRegistry registry;
    private final Clock clock;
    private final Map<RunId, Marked> marks = new ConcurrentHashMap<>();
    /** When the first borrower was told to give its resources back to each waiting owner. */
    private final Map<RunId, Remembered<Instant>> reclaimsSince = new ConcurrentHashMap<>();
    private final java.util.concurrent.atomic.AtomicLong generation = new java.util.concurrent.atomic.AtomicLong();
    /** Numbers the reads of all the active runs ({@link #readActive}), so that a mark says which read listed it last. */
    private final java.util.concurrent.atomic.AtomicLong activeReads = new java.util.concurrent.atomic.AtomicLong();
    /** How many marks were forgotten: one forgotten during a read of all active runs may hide one that read did not list. */
    private final java.util.concurrent.atomic.AtomicLong forgotten = new java.util.concurrent.atomic.AtomicLong();
    /**
     * Runs this replica is writing, by writes under way: from the call until the writer has handed the write on, after
     * its commit. A read in that window may see the write already, and would take it for another replica's.
     */
    private final Map<RunId, Integer> writing = new ConcurrentHashMap<>();
    /** The runs this thread is writing: its own reads of them (in the same transaction) still count as reads. */
    private final ThreadLocal<Map<RunId, Integer>> writingHere = ThreadLocal.withInitial(java.util.HashMap::new);

    RunMetrics(MeterRegistry registry, Clock clock) {
        this.registry = registry;
        this.clock = clock;
    }

    /**
     * A run read from the store (committed): remembered if new to this replica, or in place of what was remembered if
     * newer (another replica wrote it); a run read ended is forgotten.
     */
    synchronized void read(RunRecord run) {
        if (writing.containsKey(run.id()) && !writingHere.get().containsKey(run.id())) {
            // The writer counts what it wrote; a write that fails leaves the mark as it was, for a later read.
            return;
        }
        if (run.state().isFinal()) {
            forget(run.id());
        } else {
            remember(run.id(), RunChanges.seen(mark(run.id()), run));
        }
    }

    /**
     * A write of {@code run} begins, on this thread: other threads' reads of it are left to the writer until
     * {@link #doneWriting} (on the same thread).
     */
    void writing(RunId run) {
        writing.merge(run, 1, Integer::sum);
        writingHere.get().merge(run, 1, Integer::sum);
    }

    /** A write of {@code run} has been handed on ({@link #written}) or has failed. */
    void doneWriting(RunId run) {
        writing.computeIfPresent(run, (id, writes) -> writes == 1 ? null : writes - 1);
        writingHere.get().computeIfPresent(run, (id, writes) -> writes == 1 ? null : writes - 1);
    }

    /** Where the remembering stands now: a read that begins later sees at least what was remembered until then. */
    long generation() {
        return generation.get();
    }

    /**
     * All the runs not ended, as a read that began at {@code since} ({@link #generation()}) saw them: a run remembered
     * before then and not listed has ended or gone (another replica ended it), so it is forgotten; a standby would
     * otherwise keep every run it ever read, and every owner it saw waiting. Not under the lock as a whole (a reader
     * of many runs would hold up the control loop's writes): a mark a write sets meanwhile is newer than {@code since}.
     *
     * <p>The control loop reads every active run twice a cycle, and with 100,000 queued this was a third of a quiet
     * cycle: each run is looked up once, and a run whose version is the one remembered costs nothing more; each mark
     * says which read listed it last, and when every mark was listed by this one nothing is looked at again.
     */
    void readActive(java.util.List<RunRecord> active, long since) {
        long read = activeReads.incrementAndGet();
        long forgottenBefore = forgotten.get();
        int marked = 0;
        java.util.Set<RunId> listedUnmarked = new java.util.HashSet<>(); // listed, not remembered: ended, or being written
        for (RunRecord run : active) {
            switch (list(run, read)) {
                case NEWLY_MARKED -> marked++;
                case UNMARKED -> listedUnmarked.add(run.id());
                case MARKED_BEFORE -> { } // a second listing of the run, or a later read's
            }
        }
        if (marks.size() != marked || forgotten.get() != forgottenBefore) { // a mark this read did not list, or one changed meanwhile: look at each
            marks.entrySet().removeIf(e -> e.getValue().generation() <= since && e.getValue().listedBefore(read));
        }
        reclaimsSince.entrySet().removeIf(e -> e.getValue().generation() <= since && !listedUnmarked.contains(e.getKey()) && !listed(e.getKey(), read));
    }

    /** What {@link #list} found. */
    private enum Listing { NEWLY_MARKED, MARKED_BEFORE, UNMARKED }

    /** {@link #read} of a run that the read of all active runs numbered {@code read} listed, its mark noted as listed. */
    private synchronized Listing list(RunRecord run, long read) {
        Marked before = marks.get(run.id());
        if (before == null || run.version() > before.value().version()) {
            read(run); // as read() would: a version no newer than the mark's changes nothing
            before = marks.get(run.id());
        }
        if (before == null) {
            return Listing.UNMARKED;
        }
        return before.listedBy(read) ? Listing.NEWLY_MARKED : Listing.MARKED_BEFORE;
    }

    private boolean listed(RunId id, long read) {
        Marked mark = marks.get(id);
        return mark != null && !mark.listedBefore(read);
    }

    private RunChanges.Mark mark(RunId id) {
        Marked remembered = marks.get(id);
        return remembered == null ? null : remembered.value();
    }

    private void remember(RunId id, RunChanges.Mark mark) {
        Marked before = marks.get(id);
        if (before == null || before.value() != mark) {
            marks.put(id, new Marked(mark, generation.incrementAndGet(), before == null ? 0 : before.listedBy));
        }
    }

    private void forget(RunId id) {
        if (marks.remove(id) != null) {
            forgotten.incrementAndGet();
        }
        reclaimsSince.remove(id);
    }

    /** The runs remembered, as marks or as owners waiting for a reclaim (tests). */
    java.util.Set<RunId> remembered() {
        java.util.Set<RunId> all = new java.util.HashSet<>(marks.keySet());
        all.addAll(reclaimsSince.keySet());
        return all;
    }

    /** A thing remembered, with the generation it was remembered at. */
    private record Remembered<T>(T value, long generation) {
    }

    /**
     * A run's mark, with the generation it was remembered at and the latest read of all active runs that listed it
     * (set under the lock; a later read's number is never replaced by an earlier one's).
     */
    private static final class Marked {
        private final RunChanges.Mark value;
        private final long generation;
        private long listedBy;

        Marked(RunChanges.Mark value, long generation, long listedBy) {
            this.value = value;
            this.generation = generation;
            this.listedBy = listedBy;
        }

        RunChanges.Mark value() {
            return value;
        }

        long generation() {
            return generation;
        }

        /** Notes the read numbered {@code read} as listing it; whether no read as late had yet. */
        boolean listedBy(long read) {
            if (listedBy >= read) {
                return false;
            }
            listedBy = read;
            return true;
        }

        /** Whether no read as late as {@code read} listed it. */
        boolean listedBefore(long read) {
            return listedBy < read;
        }
    }

    /** A run this replica wrote (its transaction committed). */
    synchronized void written(RunRecord run) {
        Instant now = clock.instant();
        RunChanges.Result result = RunChanges.between(mark(run.id()), run, now);
        if (run.state().isFinal()) {
            forget(run.id());
        } else {
            remember(run.id(), result.mark());
        }
        for (RunChanges.Change change : result.changes()) {
            String quota = label(change.quota());
            if (change instanceof RunChanges.Admitted admitted) {
                admitted(run.id(), quota, admitted, now);
            } else if (change instanceof RunChanges.Preempted preempted) {
                Counter.builder("slipstream.preemptions").description("Runs told to give their resources back, by the victim's quota")
                        .tag("quota", quota).register(registry).increment();
                if (preempted.owner() != null) {
                    reclaimsSince.putIfAbsent(preempted.owner(), new Remembered<>(now, generation.incrementAndGet()));
                }
            } else if (change instanceof RunChanges.Restarted restarted) {
                Counter.builder("slipstream.restarts").description("Runs queued again, by cause")
                        .tag("quota", quota).tag("cause", restarted.cause().name().toLowerCase(Locale.ROOT)).register(registry).increment();
            } else if (change instanceof RunChanges.WorkLost lost) {
                Counter.builder("slipstream.work.lost.seconds").description("Instance-seconds of work after the last checkpoint that stops threw away")
                        .tag("quota", quota).register(registry).increment(lost.lost().toMillis() / 1000.0);
            } else if (change instanceof RunChanges.Finished finished) {
                Counter.builder("slipstream.runs.finished").description("Runs that ended, by final state")
                        .tag("quota", quota).tag("state", finished.state().name()).register(registry).increment();
            } else {
                throw new IllegalStateException("a change the metrics do not know: " + change);
            }
        }
    }

    private void admitted(RunId run, String quota, RunChanges.Admitted admitted, Instant now) {
        Counter.builder("slipstream.admissions").description("Runs admitted, by quota and whether on its guarantee")
                .tag("quota", quota).tag("resources", admitted.resources().name()).register(registry).increment();
        if (admitted.waited() != null) {
            Timer.builder("slipstream.admission.wait").description("How long runs waited in the queue before admission")
                    .serviceLevelObjectives(WAIT_BUCKETS).tag("quota", quota).register(registry).record(admitted.waited());
        }
        Remembered<Instant> reclaim = reclaimsSince.remove(run);
        Instant reclaimSince = reclaim == null ? null : reclaim.value();
        if (reclaimSince != null) {
            Timer.builder("slipstream.reclaim").description("From the first borrower told to give resources back to the owner's admission")
                    .serviceLevelObjectives(WAIT_BUCKETS).tag("quota", quota).register(registry).record(Duration.between(reclaimSince, now));
        }
    }

    static String label(QuotaId quota) {
        return quota == null ? NO_QUOTA : quota.toString();
    }
}
