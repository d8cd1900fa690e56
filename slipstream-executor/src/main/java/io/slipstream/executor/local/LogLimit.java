package io.slipstream.executor.local;

import io.slipstream.executor.LogStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps at most {@code bytes} of each log of an instance on disk. The workload appends to its logs through
 * descriptors of its own, so they cannot be renamed away; instead the oldest part is let go of in place
 * ({@code fallocate --punch-hole}): its blocks are freed, offsets stay valid for readers that follow the log, and
 * reads of what was let go of start where the kept part begins (recorded beside the log). It is checked now and then
 * (see {@link LocalProcessExecutor}), and only trimmed once it exceeds the limit by an eighth, so rarely.
 */
final class LogLimit {
    private static final Logger LOG = LoggerFactory.getLogger(LogLimit.class);
    /** Trims are made in whole blocks of this size (punching a partial block only zeroes it). */
    private static final long BLOCK = 4096;

    private final long bytes;
    private volatile boolean unsupportedWarned;

    /** @param bytes what is kept of each log; {@code 0} or less keeps everything */
    LogLimit(long bytes) {
        this.bytes = bytes;
    }

    long bytes() {
        return bytes;
    }

    /** Trims the instance's logs that are over the limit. */
    void enforce(InstanceDirectory dir) {
        if (bytes <= 0) {
            return;
        }
        for (LogStream stream : LogStream.values()) {
            try {
                BasicFileAttributes log = Files.readAttributes(dir.log(stream), BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
                long keptFrom = dir.keptFrom(stream);
                if (!log.isRegularFile() || log.size() - keptFrom <= bytes + bytes / 8) {
                    continue;
                }
                long cut = (log.size() - bytes) / BLOCK * BLOCK;
                // The new start is recorded first, so a reader never gets the zeros of a hole.
                dir.setKeptFrom(stream, cut);
                punch(dir, stream, cut);
            } catch (IOException e) {
                // not there yet, or gone
            }
        }
    }

    private void punch(InstanceDirectory dir, LogStream stream, long length) throws IOException {
        SystemCommand.Result fallocate = SystemCommand.run(List.of("fallocate", "--punch-hole", "--offset", "0", "--length", Long.toString(length),
                dir.log(stream).toString()));
        if (!fallocate.succeeded() && !unsupportedWarned) {
            unsupportedWarned = true;
            LOG.warn("cannot trim instance logs to {} bytes on this file system ({}); they grow without limit", bytes, fallocate.output());
        }
    }
}
