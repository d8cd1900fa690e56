package io.slipstream.executor.kubernetes;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.slipstream.executor.ExecutorException;
import io.slipstream.executor.LogChunk;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.time.temporal.ChronoUnit;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Copies pods' logs to local files as they are read, so that byte offsets are stable and a log outlives its pod
 * (Kubernetes drops a pod's log with the pod). Each copy fetches what came since the last line copied: the log API
 * filters by whole seconds, so lines are fetched with their timestamps and those already copied are skipped.
 */
final class LogSpool {
    private static final Duration MIN_INTERVAL = Duration.ofMillis(500);

    /** Where logs come from: a pod's log with a timestamp on each line, from a second on ({@code null}: all of it). */
    interface Source {
        String log(String namespace, String pod, Instant since);
    }

    private final Source source;
    private final Path dir;
    /** Each pod's copy as far as it goes, read from disk once; a copy is also the lock of its pod. */
    private final Map<String, Copy> copies = new ConcurrentHashMap<>();

    LogSpool(KubernetesClient client, Path dir) {
        this((namespace, pod, since) -> {
            var log = client.pods().inNamespace(namespace).withName(pod).inContainer(Manifests.MAIN_CONTAINER).usingTimestamps();
            return since == null ? log.getLog() : log.sinceTime(since.toString()).getLog();
        }, dir);
    }

    LogSpool(Source source, Path dir) {
        this.source = source;
        this.dir = dir;
    }

    /** How far a copy goes: the last line's timestamp, how many lines carried it, and whether the log is over. */
    private record Position(Instant last, int atLast, boolean complete) {
        static final Position START = new Position(null, 0, false);
    }

    private static final class Copy {
        Position position;
        Instant syncedAt = Instant.EPOCH; // in memory only: after a restart, the first read copies at once
    }

    private Copy copy(String namespace, String pod) {
        return copies.computeIfAbsent(namespace + "/" + pod, key -> {
            Copy copy = new Copy();
            copy.position = readPosition(namespace, pod);
            return copy;
        });
    }

    /**
     * Copies what is new. {@code ended}: the container has ended, so a last line without a newline is complete and
     * this is the last copy needed. Without {@code force}, copies at most every half second.
     */
    void sync(String namespace, String pod, boolean ended, boolean force) {
        Copy copy = copy(namespace, pod);
        synchronized (copy) {
            Position position = copy.position;
            Instant now = Instant.now();
            if (position.complete() || !force && Duration.between(copy.syncedAt, now).compareTo(MIN_INTERVAL) < 0) {
                return;
            }
            copy.syncedAt = now;
            String text;
            try {
                text = source.log(namespace, pod, position.last() == null ? null : position.last().truncatedTo(ChronoUnit.SECONDS));
            } catch (KubernetesClientException e) {
                if (e.getCode() == 404 || e.getCode() == 400) {
                    return; // the pod is gone, or its container has not started: nothing (more) to copy
                }
                throw new ExecutorException("cannot read the log of pod " + pod + ": " + e.getMessage(), e);
            }
            copy.position = append(namespace, pod, text == null ? "" : text, position, ended);
        }
    }

    /** Appends what is new in {@code text} and returns the position after it; disk is touched only if something changed. */
    private Position append(String namespace, String pod, String text, Position position, boolean ended) {
        StringBuilder fresh = new StringBuilder();
        Instant last = position.last();
        int atLast = position.atLast();
        int skip = position.atLast();
        int start = 0;
        while (start < text.length()) {
            int end = text.indexOf('\n', start);
            boolean partial = end < 0;
            if (partial && !ended) {
                break; // the rest of the line comes with the next copy
            }
            String line = partial ? text.substring(start) : text.substring(start, end + 1);
            start = partial ? text.length() : end + 1;
            int space = line.indexOf(' ');
            Instant at;
            try {
                at = Instant.parse(space < 0 ? line.strip() : line.substring(0, space));
            } catch (DateTimeParseException e) {
                continue; // not a line of the log (the API server adds none, but be safe)
            }
            String content = space < 0 ? "" : line.substring(space + 1);
            if (last != null && at.isBefore(last)) {
                continue;
            }
            if (last != null && at.equals(last)) {
                if (skip > 0) {
                    skip--;
                    continue;
                }
                atLast++;
            } else {
                last = at;
                atLast = 1;
                skip = 0;
            }
            fresh.append(content);
        }
        Position after = new Position(last, atLast, ended);
        if (after.equals(position)) {
            return position;
        }
        try {
            Path file = file(namespace, pod);
            Files.createDirectories(file.getParent());
            Files.writeString(file, fresh, StandardCharsets.UTF_8, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
            writePosition(namespace, pod, after);
            return after;
        } catch (IOException e) {
            throw new ExecutorException("cannot copy the log of pod " + pod + ": " + e.getMessage(), e);
        }
    }

    LogChunk read(String namespace, String pod, long offset, int maxBytes) {
        Path file = file(namespace, pod);
        if (!Files.exists(file)) {
            return new LogChunk(new byte[0], offset);
        }
        try (RandomAccessFile in = new RandomAccessFile(file.toFile(), "r")) {
            long length = in.length();
            if (offset >= length) {
                return new LogChunk(new byte[0], offset);
            }
            byte[] data = new byte[(int) Math.min(maxBytes, length - offset)];
            in.seek(offset);
            in.readFully(data);
            return new LogChunk(data, offset + data.length);
        } catch (IOException e) {
            throw new ExecutorException("cannot read the log copy of pod " + pod + ": " + e.getMessage(), e);
        }
    }

    LogChunk tail(String namespace, String pod, int maxBytes) {
        Path file = file(namespace, pod);
        long length;
        try {
            length = Files.exists(file) ? Files.size(file) : 0;
        } catch (IOException e) {
            throw new ExecutorException("cannot read the log copy of pod " + pod + ": " + e.getMessage(), e);
        }
        return read(namespace, pod, Math.max(0, length - maxBytes), maxBytes);
    }

    /** When the pod last wrote a line, as far as copied; {@code null}: never. */
    Instant lastOutputAt(String namespace, String pod) {
        Copy copy = copy(namespace, pod);
        synchronized (copy) {
            return copy.position.last();
        }
    }

    void delete(String namespace, String pod) {
        copies.remove(namespace + "/" + pod);
        try {
            Files.deleteIfExists(file(namespace, pod));
            Files.deleteIfExists(positionFile(namespace, pod));
        } catch (IOException e) {
            throw new ExecutorException("cannot delete the log copy of pod " + pod + ": " + e.getMessage(), e);
        }
    }

    /** Deletes the copies of the namespace's pods whose names {@code pods} accepts. */
    void deleteAll(String namespace, java.util.function.Predicate<String> pods) {
        Path directory = dir.resolve(namespace);
        if (!Files.isDirectory(directory)) {
            return;
        }
        try (var files = Files.list(directory)) {
            for (Path file : files.toList()) {
                String name = file.getFileName().toString();
                int dot = name.lastIndexOf('.');
                String pod = dot < 0 ? name : name.substring(0, dot);
                if (pods.test(pod) && (name.endsWith(".log") || name.endsWith(".position"))) {
                    delete(namespace, pod);
                }
            }
        } catch (IOException e) {
            throw new ExecutorException("cannot delete the log copies in " + directory + ": " + e.getMessage(), e);
        }
    }

    private Path file(String namespace, String pod) {
        return dir.resolve(namespace).resolve(pod + ".log");
    }

    private Path positionFile(String namespace, String pod) {
        return dir.resolve(namespace).resolve(pod + ".position");
    }

    /** The position is kept beside the copy, so that a restarted control plane goes on where it stopped. */
    private Position readPosition(String namespace, String pod) {
        Path file = positionFile(namespace, pod);
        try {
            if (!Files.exists(file)) {
                return Position.START;
            }
            String[] fields = Files.readString(file, StandardCharsets.UTF_8).strip().split(" ");
            return new Position(fields[0].equals("-") ? null : Instant.parse(fields[0]), Integer.parseInt(fields[1]),
                    Boolean.parseBoolean(fields[2]));
        } catch (IOException | RuntimeException e) {
            return Position.START;
        }
    }

    private void writePosition(String namespace, String pod, Position position) throws IOException {
        Path file = positionFile(namespace, pod);
        Path temp = file.resolveSibling(file.getFileName() + ".tmp");
        Files.writeString(temp, (position.last() == null ? "-" : position.last().toString()) + " " + position.atLast() + " "
                + position.complete() + "\n", StandardCharsets.UTF_8);
        Files.move(temp, file, java.nio.file.StandardCopyOption.REPLACE_EXISTING, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
    }
}
