package io.slipstream.executor.local;

import io.slipstream.executor.ExecutorException;
import io.slipstream.executor.LogChunk;
import io.slipstream.executor.LogStream;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;

/**
 * The files of one instance: {@code work/} (its sandbox and default working directory), {@code tmp/},
 * {@code stdout.log}, {@code stderr.log}, and what its supervisor writes so that the instance can be found again
 * after a crash of the control plane: {@code pid} ("supervisor-pid instance-pid") and {@code exit_code}.
 */
final class InstanceDirectory {
    private final Path dir;

    InstanceDirectory(Path dir) {
        this.dir = dir;
    }

    Path path() {
        return dir;
    }

    Path tmp() {
        return dir.resolve("tmp");
    }

    Path supervisorLog() {
        return dir.resolve("supervisor.log");
    }

    private Path sandbox() {
        return dir.resolve("work");
    }

    /** Makes the directory; with a uid, the instance's own directories belong to that uid and nobody else may enter. */
    void create(Integer uid) throws IOException {
        Files.createDirectories(sandbox());
        Files.createDirectories(tmp());
        if (uid != null) {
            for (Path path : new Path[] {dir, sandbox(), tmp()}) {
                Files.setAttribute(path, "unix:uid", uid);
                Files.setAttribute(path, "unix:gid", uid);
            }
            Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwx------"));
        }
    }

    /** Writes the run's metadata where the instance can read it (and only read it), completely, before it starts. */
    Path writeMetadata(io.slipstream.api.run.ClusterMetadata metadata) throws IOException {
        Path file = dir.resolve("metadata.json");
        Path temporary = dir.resolve("metadata.json.tmp");
        Files.writeString(temporary, io.slipstream.api.codec.Json.mapper().writerWithDefaultPrettyPrinter().writeValueAsString(metadata) + "\n",
                StandardCharsets.UTF_8);
        Files.setPosixFilePermissions(temporary, PosixFilePermissions.fromString("rw-r--r--"));
        Files.move(temporary, file, java.nio.file.StandardCopyOption.ATOMIC_MOVE, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        return file;
    }

    /** Where the instance finds the notice that it is being stopped ({@code SLIPSTREAM_PREEMPTION_NOTICE_FILE}). */
    Path noticeFile() {
        return dir.resolve("preemption_notice.json");
    }

    /** Writes the notice atomically: an instance never reads half of it. */
    void writeNotice(String reason, java.time.Instant deadline) {
        try {
            var notice = io.slipstream.api.codec.Json.mapper().createObjectNode();
            notice.put("reason", reason);
            notice.put("deadline", deadline.toString());
            Path temporary = dir.resolve("preemption_notice.json.tmp");
            Files.writeString(temporary, notice.toString() + "\n");
            Files.setPosixFilePermissions(temporary, PosixFilePermissions.fromString("rw-r--r--"));
            Files.move(temporary, noticeFile(), java.nio.file.StandardCopyOption.ATOMIC_MOVE, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        } catch (IOException e) {
            // Best effort: the signal still comes.
        }
    }

    /** Where the instance writes to say it saved its work and may be stopped now ({@code SLIPSTREAM_PREEMPTION_ACK_FILE}). */
    Path ackFile() {
        return dir.resolve("preemption_ack");
    }

    /** Where the instance reports its progress ({@code SLIPSTREAM_PROGRESS_FILE}). */
    Path progressFile() {
        return dir.resolve("progress.json");
    }

    /** When the instance last wrote to stdout or stderr, or {@code null}. */
    java.time.Instant lastOutputAt() {
        java.time.Instant last = null;
        for (String name : new String[] {"stdout.log", "stderr.log"}) {
            try {
                java.time.Instant modified = Files.getLastModifiedTime(dir.resolve(name)).toInstant();
                if (Files.size(dir.resolve(name)) > 0 && (last == null || modified.isAfter(last))) {
                    last = modified;
                }
            } catch (IOException e) {
                // not there yet
            }
        }
        return last;
    }

    /** Remembers (across a restart of the server) that the platform asked the instance to stop. */
    void markTerminationRequested() {
        try {
            Files.writeString(dir.resolve("terminate_requested"), "");
        } catch (IOException e) {
            // Best effort: without it a stop looks like a failure after a restart.
        }
    }

    boolean terminationRequested() {
        return Files.exists(dir.resolve("terminate_requested"));
    }

    /**
     * The working directory a spec asked for, inside the sandbox, made if missing (and given to {@code uid} if not
     * null); refuses paths, or symlinks, that lead out.
     */
    Path workingDir(String relative, Integer uid) throws IOException {
        Path sandbox = sandbox();
        if (relative == null) {
            return sandbox;
        }
        Path target = sandbox.resolve(relative).normalize();
        if (!target.startsWith(sandbox)) {
            throw new ExecutorException("workingDir " + relative + " leaves the instance's directory");
        }
        Files.createDirectories(target);
        if (!target.toRealPath().startsWith(sandbox.toRealPath())) {
            throw new ExecutorException("workingDir " + relative + " leads outside the instance's directory");
        }
        for (Path path = target; uid != null && !path.equals(sandbox); path = path.getParent()) {
            Files.setAttribute(path, "unix:uid", uid);
            Files.setAttribute(path, "unix:gid", uid);
        }
        return target;
    }

    /** {supervisor pid, instance pid} once the supervisor started the command, else {@code null}. */
    long[] pids() throws IOException {
        Path file = dir.resolve("pid");
        try {
            String line = Files.readString(file, StandardCharsets.UTF_8);
            if (!line.endsWith("\n")) {
                return null; // being written
            }
            String[] fields = line.trim().split(" ");
            if (fields.length != 2) {
                throw new IOException("unreadable " + file);
            }
            return new long[] {Long.parseLong(fields[0]), Long.parseLong(fields[1])};
        } catch (NoSuchFileException e) {
            return null;
        } catch (NumberFormatException e) {
            throw new IOException("unreadable " + file + ": " + e.getMessage());
        }
    }

    /** The exit code the supervisor recorded, or {@code null} if it has not (yet). */
    Integer exitCode() {
        try {
            String line = Files.readString(dir.resolve("exit_code"), StandardCharsets.UTF_8);
            return line.endsWith("\n") ? Integer.valueOf(line.trim()) : null; // no newline yet: being written
        } catch (IOException | NumberFormatException e) {
            return null;
        }
    }

    /** The end of what the supervisor itself printed (normally nothing), for error messages. */
    String supervisorOutput() {
        try {
            String text = Files.readString(supervisorLog(), StandardCharsets.UTF_8).trim();
            return text.length() > 500 ? text.substring(text.length() - 500) : text;
        } catch (IOException e) {
            return "(no output)";
        }
    }

    /** The last {@code maxBytes} of a log. */
    LogChunk tail(LogStream stream, int maxBytes) {
        Path file = dir.resolve(stream == LogStream.STDOUT ? "stdout.log" : "stderr.log");
        long length;
        try {
            length = Files.size(file);
        } catch (IOException e) {
            return new LogChunk(new byte[0], 0);
        }
        return read(stream, Math.max(0, length - maxBytes), maxBytes);
    }

    LogChunk read(LogStream stream, long offset, int maxBytes) {
        Path file = dir.resolve(stream == LogStream.STDOUT ? "stdout.log" : "stderr.log");
        try (RandomAccessFile log = new RandomAccessFile(file.toFile(), "r")) {
            long length = log.length();
            if (offset >= length) {
                return new LogChunk(new byte[0], Math.max(offset, 0));
            }
            byte[] data = new byte[(int) Math.min(maxBytes, length - offset)];
            log.seek(offset);
            log.readFully(data);
            return new LogChunk(data, offset + data.length);
        } catch (NoSuchFileException | FileNotFoundException e) {
            return new LogChunk(new byte[0], 0);
        } catch (IOException e) {
            throw new ExecutorException("cannot read " + file + ": " + e.getMessage(), e);
        }
    }
}
