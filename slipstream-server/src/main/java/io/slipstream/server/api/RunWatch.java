package io.slipstream.server.api;

import io.javalin.http.Context;
import io.slipstream.api.codec.Json;
import io.slipstream.api.run.RunId;
import io.slipstream.api.wire.RunView;
import io.slipstream.model.InstanceRecord;
import io.slipstream.model.RunRecord;
import io.slipstream.server.auth.Principal;
import io.slipstream.server.service.RunService;
import io.slipstream.store.RunRow;
import io.slipstream.store.Store;
import io.slipstream.store.StoreUnavailableException;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code GET /api/v1/watch}: a server-sent event stream of the runs {@code GET /api/v1/runs} would list with the
 * same query, one {@code run} event (the run as the list shows it) whenever one of them changes, a {@code gone}
 * event when one leaves the set (its state no longer matches, newer runs pushed it off the page). The store is polled
 * (every {@link Limits#poll}) on the request's own thread, as {@code logs?follow} does; streams are bounded per user
 * (beyond: the user's oldest stream ends, {@link StreamSlots}) and per server (beyond: 429 with Retry-After), send a
 * heartbeat comment when idle, and end with an {@code end} event on their timeout, when replaced, or when the server stops.
 */
final class RunWatch implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(RunWatch.class);
    static final long RETRY_AFTER_SECONDS = 5;

    /** How many streams a user and the whole server may hold, how often each polls, how long it may stay silent. */
    record Limits(int perUser, int total, Duration poll, Duration heartbeat) {
        static final Limits DEFAULTS = new Limits(8, 64, Duration.ofMillis(500), Duration.ofSeconds(2));
    }

    private final Store store;
    private final RunService runs;
    private final Limits limits;
    private final Object lock = new Object();
    private final StreamSlots slots;
    private boolean closed;

    RunWatch(Store store, RunService runs, Limits limits) {
        this.store = store;
        this.runs = runs;
        this.limits = limits;
        this.slots = new StreamSlots(limits.perUser(), limits.total());
    }

    /**
     * Serves one stream until its {@code timeout}, the client leaving or the server stopping. {@code who} authenticates
     * the request's token again: each poll sees what the caller may see now (a token revoked or a workspace left since
     * the stream opened is not served for the rest of its hour).
     */
    void serve(Context ctx, Principal caller, java.util.function.Supplier<Principal> who, RunListParams query, String run, Duration timeout) {
        Watched watched = new Watched(caller, query, run);
        if (run != null) {
            runs.get(caller, run); // 404 now, as GET /api/v1/runs/{run} answers, not an empty stream
        }
        StreamSlots.Slot slot = admit(caller.user());
        if (slot == null) {
            ctx.header("Retry-After", Long.toString(RETRY_AFTER_SECONDS));
            throw new ApiException(429, "TOO_MANY_STREAMS", "the server holds " + limits.total() + " watch streams, as many as it serves; try again in "
                    + RETRY_AFTER_SECONDS + " s");
        }
        try {
            ctx.status(200).contentType("text/event-stream; charset=utf-8");
            ctx.header("Cache-Control", "no-store");
            ctx.header("X-Accel-Buffering", "no"); // a proxy in front must not hold events back
            OutputStream out = ctx.res().getOutputStream();
            stream(out, watched, who, slot, System.nanoTime() + timeout.toNanos());
        } catch (IOException e) {
            LOG.debug("a watch client of {} went away: {}", caller.user(), e.getMessage());
        } finally {
            release(slot);
        }
    }

    /** What one stream shows: the runs of a list query, or the one run named. */
    private record Watched(Principal caller, RunListParams query, String run) {
    }

    private void stream(OutputStream out, Watched watched, java.util.function.Supplier<Principal> who, StreamSlots.Slot slot, long deadline)
            throws IOException {
        Principal caller = watched.caller();
        String refused = null;
        Map<String, RunRecord> current = new LinkedHashMap<>();
        Map<String, String> seen = poll(watched, current);
        write(out, "event: ready\ndata: " + Json.mapper().writeValueAsString(Map.of("runs", seen.size())) + "\n\n");
        long lastWrite = System.nanoTime();
        while (true) {
            if (!pause(slot, deadline)) {
                break;
            }
            Map<String, String> now;
            try {
                caller = who.get();
                watched = new Watched(caller, watched.query(), watched.run());
                now = poll(watched, current);
            } catch (ApiException e) { // 401: revoked, expired, or a run token whose run ended
                refused = "the token is no longer valid";
                break;
            } catch (StoreUnavailableException e) {
                now = seen; // the next poll tries again; the heartbeat keeps the stream open meanwhile
            }
            for (String id : WatchChanges.changed(seen, now)) {
                RunRecord run = current.get(id);
                RunView view = Views.run(run, store.runs().instancesOf(run.id()), runs.queueOf(run), false, caller.admin());
                write(out, "event: run\nid: " + id + "\ndata: " + Json.mapper().writeValueAsString(view) + "\n\n");
                lastWrite = System.nanoTime();
            }
            for (String id : WatchChanges.gone(seen, now)) {
                write(out, "event: gone\nid: " + id + "\ndata: " + Json.mapper().writeValueAsString(Map.of("id", id)) + "\n\n");
                lastWrite = System.nanoTime();
            }
            seen = now;
            if (System.nanoTime() - lastWrite >= limits.heartbeat().toNanos()) {
                write(out, ": heartbeat\n\n");
                lastWrite = System.nanoTime();
            }
        }
        String reason;
        synchronized (lock) {
            reason = refused != null ? refused : closed ? "server stopping" : slot.replaced ? "replaced by a newer stream of this user" : "timeout";
        }
        write(out, "event: end\ndata: " + Json.mapper().writeValueAsString(Map.of("reason", reason)) + "\n\n");
    }

    /** Waits one poll interval; false once the stream must end (its deadline, or the server stopping). */
    private boolean pause(StreamSlots.Slot slot, long deadline) {
        synchronized (lock) {
            long wait = Math.min(limits.poll().toNanos(), deadline - System.nanoTime());
            if (closed || slot.replaced || wait <= 0) {
                return false;
            }
            try {
                lock.wait(Math.max(1, wait / 1_000_000));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
            return !closed && !slot.replaced;
        }
    }

    /** The fingerprints of the runs the query shows now, in its order; {@code current} gets the runs themselves. */
    private Map<String, String> poll(Watched watched, Map<String, RunRecord> current) {
        RunListParams query = watched.query();
        Principal caller = watched.caller();
        List<RunRow> rows = watched.run() != null ? one(caller, watched.run())
                : runs.list(caller, query.workspace(), query.job(), query.states(), query.since(), query.until(), query.selector(), query.limit(),
                        query.before());
        current.clear();
        for (RunRow row : rows) {
            if (row instanceof RunRow.Readable readable) { // an unreadable run is listed by GET /api/v1/runs; it does not change
                current.put(readable.run().id().value(), readable.run());
            }
        }
        // The page's own instances: reading every running run's (thousands, twice a second per stream) was a third of
        // the API's CPU under load.
        Map<RunId, List<InstanceRecord>> instances = store.runs().currentInstancesOf(current.values());
        Map<String, String> keys = new LinkedHashMap<>();
        for (RunRecord run : current.values()) {
            keys.put(run.id().value(), WatchChanges.fingerprint(run, instances.getOrDefault(run.id(), List.of()), runs.queueOf(run)));
        }
        return keys;
    }

    /** The run named, or none once it is gone (deleted after its retention). */
    private List<RunRow> one(Principal caller, String run) {
        try {
            return List.of(new RunRow.Readable(runs.get(caller, run)));
        } catch (ApiException gone) {
            return List.of();
        }
    }

    private static void write(OutputStream out, String text) throws IOException {
        out.write(text.getBytes(StandardCharsets.UTF_8));
        out.flush();
    }

    /** A place for a stream of {@code user}'s (a replaced stream of theirs is woken to end), or null when the server is full. */
    private StreamSlots.Slot admit(String user) {
        synchronized (lock) {
            if (closed) {
                throw new ApiException(503, "STOPPING", "the server is stopping; try again shortly");
            }
            StreamSlots.Slot slot = slots.take(user);
            lock.notifyAll();
            return slot;
        }
    }

    private void release(StreamSlots.Slot slot) {
        synchronized (lock) {
            slots.release(slot);
            lock.notifyAll();
        }
    }

    /** How many streams are open: for tests and the stop that waits for them. */
    int open() {
        synchronized (lock) {
            return slots.open();
        }
    }

    /** Ends every stream (each writes its {@code end} event) and waits briefly for them to go, then refuses new ones. */
    @Override
    public void close() {
        synchronized (lock) {
            closed = true;
            lock.notifyAll();
            long deadline = System.nanoTime() + Duration.ofSeconds(2).toNanos();
            while (slots.open() > 0 && System.nanoTime() < deadline) {
                try {
                    lock.wait(Math.max(1, (deadline - System.nanoTime()) / 1_000_000));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
        }
    }
}
