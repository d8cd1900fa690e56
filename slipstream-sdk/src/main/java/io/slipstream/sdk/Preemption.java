package io.slipstream.sdk;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.Optional;
import java.util.function.Consumer;
import java.util.Map;

/**
 * The stop notice. Before the platform sends SIGTERM (preemption, cancellation, a restart of the gang, a change of an
 * elastic run's size) it writes {@code SLIPSTREAM_PREEMPTION_NOTICE_FILE} with the reason and the deadline, after
 * which the instance is killed. The workload saves what it must and then acknowledges
 * ({@code SLIPSTREAM_PREEMPTION_ACK_FILE}) to be released at once instead of at the deadline. Whatever the reason, it
 * does the same (save, acknowledge, exit 0); {@link Notice#worldChanging()} and {@link Notice#shrunk()} tell what
 * comes next.
 */
public final class Preemption {
    /** How the reason of a notice for a survivor of an elastic run's change of size begins. */
    public static final String WORLD_CHANGE = "WorldChange:";
    /** How the reason of a notice for an instance a shrink removes begins. */
    public static final String SHRUNK = "Shrunk:";

    /** Why the instance is being stopped, and when it will be killed ({@code null}: unknown, e.g. a plain SIGTERM). */
    public record Notice(String reason, Instant deadline) {
        /**
         * An elastic run changes size and this instance stays in it: save, acknowledge and exit 0; it is started again
         * in place (same attempt, same checkpoint directory) with the new world's variables
         * ({@code SLIPSTREAM_WORLD_VERSION} one more). Neither a failure nor a preemption.
         */
        public boolean worldChanging() {
            return reason.startsWith(WORLD_CHANGE);
        }

        /**
         * A shrink removes this instance from its elastic run: exit 0 (saving does no harm; the survivors' checkpoint is
         * what counts). It is not started again; the run goes on without it.
         */
        public boolean shrunk() {
            return reason.startsWith(SHRUNK);
        }
    }

    private final Path noticeFile;
    private final Path ackFile;

    Preemption(Path noticeFile, Path ackFile) {
        this.noticeFile = noticeFile;
        this.ackFile = ackFile;
    }

    /** The notice, if the platform has asked this instance to stop. */
    public Optional<Notice> notice() {
        if (noticeFile == null || !Files.isRegularFile(noticeFile)) {
            return Optional.empty();
        }
        try {
            Object parsed = MiniJson.parse(Files.readString(noticeFile));
            Map<?, ?> node = parsed instanceof Map<?, ?> map ? map : Map.of();
            Instant deadline = null;
            try {
                deadline = node.get("deadline") instanceof String text ? Instant.parse(text) : null;
            } catch (DateTimeParseException e) {
                // an unknown deadline: the caller saves as fast as it can
            }
            Object reason = node.get("reason");
            return Optional.of(new Notice(reason == null ? "stop requested" : reason.toString(), deadline));
        } catch (IOException | RuntimeException e) {
            return Optional.of(new Notice("stop requested", null));
        }
    }

    /** Tells the platform that this instance saved its work and may be stopped now. */
    public void acknowledge() {
        if (ackFile == null) {
            return;
        }
        try {
            Files.writeString(ackFile, Instant.now() + "\n");
        } catch (IOException e) {
            // The grace period ends the instance all the same.
        }
    }

    /**
     * Runs {@code callback} when the JVM is told to stop (SIGTERM), with the notice if there is one, then acknowledges.
     * The callback runs on a shutdown-hook thread while the rest of the program still runs: it may wait, until the
     * deadline, for the program to save a checkpoint.
     */
    public void onStop(Consumer<Notice> callback) {
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            Notice notice = notice().orElse(new Notice("terminated", null));
            try {
                callback.accept(notice);
            } finally {
                acknowledge();
            }
        }, "slipstream-preemption"));
    }
}
