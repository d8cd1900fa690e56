package io.slipstream.executor.local.files;

import io.slipstream.executor.ExecutorException;
import io.slipstream.executor.LogChunk;
import io.slipstream.executor.LogStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SeekableByteChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Instant;

/**
 * The logs of an instance, in its control directory: {@code stdout.log} and {@code stderr.log}, which the workload
 * writes through the descriptors it inherited (it cannot rename or replace them, but may write anywhere in them), and
 * {@code supervisor.log}. They are read by offset and length, only as regular files and never through a link; what
 * {@link LogLimit} let go of is skipped (where the kept part of a log begins is recorded beside it,
 * {@code <log>.start}).
 */
public final class InstanceLogs {
    private final Path dir;
    /** Whether the workload can write the directory ({@link InstanceDirectory#sharedWithWorkload}). */
    private final boolean shared;

    InstanceLogs(Path dir, boolean shared) {
        this.dir = dir;
        this.shared = shared;
    }

    public Path of(LogStream stream) {
        return dir.resolve(stream == LogStream.STDOUT ? "stdout.log" : "stderr.log");
    }

    Path supervisor() {
        return dir.resolve("supervisor.log");
    }

    /** The end of what the supervisor itself printed (normally nothing), for error messages. */
    String supervisorOutput() {
        try {
            String text = new String(tail(supervisor(), 0, 500).data(), StandardCharsets.UTF_8).trim();
            return text.isEmpty() ? "(no output)" : text;
        } catch (RuntimeException e) {
            return "(no output)";
        }
    }

    /** When the instance last wrote to stdout or stderr, or {@code null}. */
    public Instant lastOutputAt() {
        Instant last = null;
        for (LogStream stream : LogStream.values()) {
            try {
                BasicFileAttributes log = Files.readAttributes(of(stream), BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
                Instant modified = log.lastModifiedTime().toInstant();
                if (log.isRegularFile() && log.size() > 0 && (last == null || modified.isAfter(last))) {
                    last = modified;
                }
            } catch (IOException e) {
                // not there yet
            }
        }
        return last;
    }

    /** The last {@code maxBytes} of a log. */
    public LogChunk tail(LogStream stream, int maxBytes) {
        return tail(of(stream), keptFrom(stream), maxBytes);
    }

    private LogChunk tail(Path file, long keptFrom, int maxBytes) {
        long length;
        try {
            length = Files.readAttributes(file, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS).size();
        } catch (IOException e) {
            return new LogChunk(new byte[0], 0);
        }
        return read(file, Math.max(keptFrom, length - maxBytes), maxBytes);
    }

    /** Up to {@code maxBytes} from {@code offset}; offsets before what is kept (see {@link LogLimit}) start where it begins. */
    public LogChunk read(LogStream stream, long offset, int maxBytes) {
        return read(of(stream), Math.max(offset, keptFrom(stream)), maxBytes);
    }

    private LogChunk read(Path file, long offset, int maxBytes) {
        try {
            BasicFileAttributes attributes = Files.readAttributes(file, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
            if (!attributes.isRegularFile()) {
                throw new ExecutorException("cannot read " + file.getFileName() + ": not a regular file");
            }
            // Where the workload can write the directory, it may have swapped a FIFO in since.
            try (SeekableByteChannel log = shared ? SafeFiles.openRegular(file) : Files.newByteChannel(file, StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS)) {
                long length = log.size();
                if (offset >= length) {
                    return new LogChunk(new byte[0], Math.max(offset, 0));
                }
                ByteBuffer data = ByteBuffer.allocate((int) Math.min(maxBytes, length - offset));
                log.position(offset);
                while (data.hasRemaining() && log.read(data) > 0) {
                    // fill
                }
                return new LogChunk(java.util.Arrays.copyOf(data.array(), data.position()), offset + data.position());
            }
        } catch (NoSuchFileException e) {
            return new LogChunk(new byte[0], 0);
        } catch (IOException e) {
            throw new ExecutorException("cannot read " + file.getFileName() + ": " + e.getMessage(), e);
        }
    }

    /** Where what is kept of a log begins: 0, or past the oldest part {@link LogLimit} let go of. */
    long keptFrom(LogStream stream) {
        try {
            Path file = keptFromFile(stream);
            byte[] data = shared ? SafeFiles.readSharedFile(file, InstanceDirectory.MAX_CONTROL_FILE_BYTES)
                    : SafeFiles.readControlFile(file, InstanceDirectory.MAX_CONTROL_FILE_BYTES);
            return data == null ? 0 : Long.parseLong(new String(data, StandardCharsets.US_ASCII).trim());
        } catch (IOException | NumberFormatException e) {
            return 0;
        }
    }

    void setKeptFrom(LogStream stream, long offset) throws IOException {
        SafeFiles.writeControlFile(keptFromFile(stream), (offset + "\n").getBytes(StandardCharsets.US_ASCII), "rw-------");
    }

    private Path keptFromFile(LogStream stream) {
        return dir.resolve(of(stream).getFileName() + ".start");
    }
}
