package io.slipstream.executor.local.files;

import io.slipstream.executor.LogStream;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps at most {@code bytes} of each log of an instance on disk. The workload writes its logs through descriptors of
 * its own, so they cannot be renamed away, and it may write anywhere in them (it can drop {@code O_APPEND}); so what
 * counts is the space a log takes on disk (its allocated blocks), and what goes is everything before its last
 * {@code bytes}: it is let go of in place ({@code fallocate --punch-hole}), which frees the blocks and keeps offsets
 * valid for readers that follow the log; reads of what was let go of start where the kept part begins (recorded
 * beside the log). Checked now and then (by the executor) with one {@code stat} for many logs, and
 * only acted on once a log takes more than an eighth over the limit, so rarely.
 */
public final class LogLimit {
    private static final Logger LOG = LoggerFactory.getLogger(LogLimit.class);
    /** Trims are made in whole blocks of this size (punching a partial block only zeroes it). */
    private static final long BLOCK = 4096;
    private static final int LOGS_PER_STAT = 500;
    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    private final long bytes;
    private volatile boolean unsupportedWarned;

    /** @param bytes what is kept of each log; {@code 0} or less keeps everything */
    public LogLimit(long bytes) {
        this.bytes = bytes;
    }

    /** Trims the logs of these instances that take more than the limit on disk. */
    public void enforce(Collection<InstanceDirectory> instances) {
        if (bytes <= 0) {
            return;
        }
        Map<String, InstanceLogs> owners = new HashMap<>();
        Map<String, LogStream> streams = new HashMap<>();
        List<String> logs = new ArrayList<>();
        for (InstanceDirectory dir : instances) {
            InstanceLogs instanceLogs = dir.logs();
            for (LogStream stream : LogStream.values()) {
                String log = instanceLogs.of(stream).toString();
                owners.put(log, instanceLogs);
                streams.put(log, stream);
                logs.add(log);
            }
        }
        for (int from = 0; from < logs.size(); from += LOGS_PER_STAT) {
            List<String> argv = new ArrayList<>(List.of("stat", "--format=%b %B %s %n", "--"));
            argv.addAll(logs.subList(from, Math.min(logs.size(), from + LOGS_PER_STAT)));
            try {
                // A log that is not there yet makes stat fail for it alone: the lines of the others are still read.
                String output = SystemCommand.run(argv, TIMEOUT, 1 << 20).output();
                for (String line : output.split("\n")) {
                    String[] fields = line.split(" ", 4);
                    if (fields.length == 4 && owners.containsKey(fields[3]) && fields[0].matches("\\d+") && fields[1].matches("\\d+")
                            && fields[2].matches("\\d+")) {
                        long allocated = Long.parseLong(fields[0]) * Long.parseLong(fields[1]);
                        trimIfOver(owners.get(fields[3]), streams.get(fields[3]), allocated, Long.parseLong(fields[2]));
                    }
                }
            } catch (IOException | RuntimeException e) {
                LOG.debug("cannot look at instance logs: {}", e.toString());
            }
        }
    }

    private void trimIfOver(InstanceLogs dir, LogStream stream, long allocated, long size) throws IOException {
        if (allocated <= bytes + bytes / 8) {
            return;
        }
        long cut = Math.max(dir.keptFrom(stream), (size - bytes) / BLOCK * BLOCK);
        if (cut <= 0) {
            return;
        }
        // The new start is recorded first, so a reader never gets the zeros of a hole.
        dir.setKeptFrom(stream, cut);
        SystemCommand.Result fallocate = SystemCommand.run(List.of("fallocate", "--punch-hole", "--offset", "0", "--length", Long.toString(cut),
                dir.of(stream).toString()), TIMEOUT);
        if (!fallocate.succeeded() && !unsupportedWarned) {
            unsupportedWarned = true;
            LOG.warn("cannot trim instance logs to {} bytes on this file system ({}); they grow without limit", bytes, fallocate.output());
        }
    }
}
