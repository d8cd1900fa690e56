package io.slipstream.server.service;

import io.slipstream.api.codec.Json;
import io.slipstream.api.run.InstanceState;
import io.slipstream.executor.Executor;
import io.slipstream.executor.LogChunk;
import io.slipstream.executor.LogStream;
import io.slipstream.server.api.ApiException;
import io.slipstream.model.InstanceRecord;
import io.slipstream.model.RunRecord;
import io.slipstream.store.Store;
import io.slipstream.store.StoreUnavailableException;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import tools.jackson.databind.node.ObjectNode;

/**
 * Streams the output of a run's instances, every line tagged with where it came from. As text:
 * {@code [worker-1|r2|node-3] the line}; as JSON lines: {@code {"nodeGroup","rank","groupRank","node","stream","line"}}.
 * With {@code follow}, keeps streaming until the run ends and everything it wrote was sent, attempt after attempt.
 */
public final class LogService {
    private static final int CHUNK = 64 * 1024;
    /** A "line" longer than this (a progress bar that never ends one) is sent in pieces: memory stays bounded. */
    private static final int MAX_LINE = 64 * 1024;
    private static final Duration POLL = Duration.ofMillis(150);
    /** A follow stream that has sent nothing for this long ends; the client may simply ask again. */
    private static final Duration FOLLOW_IDLE_LIMIT = Duration.ofMinutes(30);
    /** Follow streams hold a server thread each: at most this many at once. */
    private static final int MAX_FOLLOWERS = 64;

    private final java.util.concurrent.Semaphore followers = new java.util.concurrent.Semaphore(MAX_FOLLOWERS);

    private final Store store;
    private final Executor executor;

    public LogService(Store store, Executor executor) {
        this.store = store;
        this.executor = executor;
    }

    /**
     * What to stream. {@code instance} is a name like {@code worker-1}, or {@code null} for all. {@code nodesOf}: the
     * attempt whose instances' nodes lines may name ({@link #NO_NODES}: none, {@link #EVERY_NODE}: all, for admins).
     */
    public record Request(String instance, Integer attempt, Set<LogStream> streams, boolean follow, boolean json, boolean prefix, int nodesOf) {
        public static final int NO_NODES = 0;
        public static final int EVERY_NODE = -1;

        boolean showsNode(InstanceRecord instance) {
            return nodesOf == EVERY_NODE || instance.id().attempt() == nodesOf;
        }
    }

    /** Attempt by attempt, then by rank and stream: one attempt's output before the next one's. */
    private static final java.util.Comparator<Cursor> IN_ORDER = java.util.Comparator
            .<Cursor>comparingInt(c -> c.instance.id().attempt()).thenComparingInt(c -> c.instance.id().rank()).thenComparing(c -> c.stream);

    private static final class Cursor {
        final InstanceRecord instance;
        final LogStream stream;
        long offset;
        boolean afterCarriageReturn;
        final ByteArrayOutputStream partial = new ByteArrayOutputStream();

        Cursor(InstanceRecord instance, LogStream stream) {
            this.instance = instance;
            this.stream = stream;
        }
    }

    public static Set<LogStream> parseStreams(String text) {
        if (text == null || text.equals("all")) {
            return EnumSet.allOf(LogStream.class);
        }
        return switch (text) {
            case "stdout" -> EnumSet.of(LogStream.STDOUT);
            case "stderr" -> EnumSet.of(LogStream.STDERR);
            default -> throw new io.slipstream.api.problem.InvalidInputException("stream", "must be stdout, stderr or all (is '" + text + "')");
        };
    }

    /** Validates the request against the run (so that errors are answered before the response starts). */
    public void check(RunRecord run, Request request) {
        if (request.attempt() != null && (request.attempt() < 1 || request.attempt() > run.attempt())) {
            throw new io.slipstream.api.problem.InvalidInputException("attempt", "must be between 1 and " + run.attempt());
        }
        if (request.instance() != null && !instanceNames(run).contains(request.instance())) {
            throw ApiException.notFound("run " + run.id() + " has no instance " + request.instance());
        }
    }

    private static Set<String> instanceNames(RunRecord run) {
        Set<String> names = new java.util.HashSet<>();
        run.spec().nodeGroups().forEach(group -> {
            for (int i = 0; i < group.replicas(); i++) {
                names.add(group.name() + "-" + i);
            }
        });
        return names;
    }

    /** Streams the output; a follow stream takes one of a bounded number of places, or is refused with 503. */
    public void stream(RunRecord run, Request request, OutputStream out) throws IOException {
        if (!request.follow()) {
            copy(run, request, out);
            return;
        }
        if (!followers.tryAcquire()) {
            throw new ApiException(503, "BUSY", "too many log streams are being followed; try again shortly");
        }
        try {
            copy(run, request, out);
        } finally {
            followers.release();
        }
    }

    private void copy(RunRecord run, Request request, OutputStream out) throws IOException {
        Map<String, Cursor> cursors = new HashMap<>();
        RunRecord current = run;
        long lastOutput = System.nanoTime();
        while (true) {
            for (InstanceRecord instance : selectedOrNone(current, request)) {
                for (LogStream stream : request.streams()) {
                    cursors.computeIfAbsent(instance.id() + "/" + stream, key -> new Cursor(instance, stream));
                }
            }
            boolean finished = current.state().isFinal();
            boolean progressed = false;
            for (Cursor cursor : cursors.values().stream().sorted(IN_ORDER).toList()) {
                progressed |= drain(cursor, request, out);
            }
            out.flush();
            if (progressed) {
                lastOutput = System.nanoTime();
            }
            boolean idleTooLong = System.nanoTime() - lastOutput > FOLLOW_IDLE_LIMIT.toNanos();
            if (!request.follow() || (finished && !progressed) || idleTooLong) {
                for (Cursor cursor : cursors.values()) {
                    if (cursor.partial.size() > 0) {
                        writeLine(cursor, cursor.partial.toString(StandardCharsets.UTF_8), request, out);
                    }
                }
                out.flush();
                return;
            }
            if (!progressed) {
                sleep();
                try {
                    current = store.runs().get(run.id()).orElse(current);
                } catch (StoreUnavailableException e) {
                    // The answer has begun: no 503 can be given now. Go on with what is known; the store comes back.
                }
            }
        }
    }

    /** The selected instances; while following, none new during a store outage (the known ones are read on). */
    private List<InstanceRecord> selectedOrNone(RunRecord run, Request request) {
        try {
            return selected(run, request);
        } catch (StoreUnavailableException e) {
            if (!request.follow()) {
                throw e;
            }
            return List.of();
        }
    }

    /**
     * The instances whose output is sent: of the attempt asked for; else, following, of every attempt (a short first
     * attempt may be over before the first poll, or between two: looking only at the attempt current at each poll
     * lost its output); else of the current attempt.
     */
    private List<InstanceRecord> selected(RunRecord run, Request request) {
        Integer attempt = request.attempt() != null ? request.attempt() : request.follow() ? null : Integer.valueOf(run.attempt());
        List<InstanceRecord> selected = new ArrayList<>();
        for (InstanceRecord instance : store.runs().instancesOf(run.id())) {
            if ((attempt == null || instance.id().attempt() == attempt) && instance.state() != InstanceState.PENDING
                    && (request.instance() == null || request.instance().equals(instance.displayName()))) {
                selected.add(instance);
            }
        }
        return selected;
    }

    private boolean drain(Cursor cursor, Request request, OutputStream out) throws IOException {
        boolean any = false;
        while (true) {
            LogChunk chunk = executor.readLog(cursor.instance.id(), cursor.instance.handle(), cursor.stream, cursor.offset, CHUNK);
            if (chunk.data().length == 0) {
                return any;
            }
            any = true;
            cursor.offset = chunk.nextOffset();
            for (byte b : chunk.data()) {
                if (b == '\n' || b == '\r') {
                    // \r ends a line too (progress bars redraw with it); \r\n is one line end, not two.
                    if (!(b == '\n' && cursor.afterCarriageReturn)) {
                        writeLine(cursor, cursor.partial.toString(StandardCharsets.UTF_8), request, out);
                    }
                    cursor.partial.reset();
                    cursor.afterCarriageReturn = b == '\r';
                } else {
                    cursor.afterCarriageReturn = false;
                    cursor.partial.write(b);
                    if (cursor.partial.size() >= MAX_LINE) {
                        writeLine(cursor, cursor.partial.toString(StandardCharsets.UTF_8), request, out);
                        cursor.partial.reset();
                    }
                }
            }
        }
    }

    private static void writeLine(Cursor cursor, String line, Request request, OutputStream out) throws IOException {
        InstanceRecord instance = cursor.instance;
        String node = request.showsNode(instance) ? instance.node() : "hidden";
        String text;
        if (request.json()) {
            ObjectNode json = Json.mapper().createObjectNode();
            json.put("nodeGroup", instance.nodeGroup());
            json.put("rank", instance.id().rank());
            json.put("groupRank", instance.groupRank());
            json.put("attempt", instance.id().attempt());
            json.put("node", node);
            json.put("stream", cursor.stream.name().toLowerCase(java.util.Locale.ROOT));
            json.put("line", line);
            text = json.toString() + "\n";
        } else if (request.prefix()) {
            text = "[" + instance.displayName() + "|r" + instance.id().rank() + "|" + node + "] " + line + "\n";
        } else {
            text = line + "\n";
        }
        out.write(text.getBytes(StandardCharsets.UTF_8));
    }

    private static void sleep() {
        try {
            Thread.sleep(POLL.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }
}
