package io.slipstream.executor.local.files;

import java.io.File;
import java.nio.file.Path;

/**
 * The files the executor hands to the processes it starts as their stdin, stdout or stderr, and the directory they start
 * in. The JDK opens and enters them as the server, following links, so nothing but these may be given: {@code /dev/null},
 * and logs and directories only the server can change (an instance's control directory, the instances' root, the
 * networks' state); never a workload's (its sandbox is entered only after the switch to its uid).
 */
public final class Redirects {
    /** Nothing to read. */
    public static final ProcessBuilder.Redirect NO_INPUT = ProcessBuilder.Redirect.from(new File("/dev/null"));

    private Redirects() {
    }

    /** Appends to {@code log}, which lies in a directory only the server can change. */
    public static ProcessBuilder.Redirect appendToControlFile(Path log) {
        return ProcessBuilder.Redirect.appendTo(log.toFile());
    }

    /** Starts {@code builder}'s process in {@code dir}, a directory only the server can change, and returns the builder. */
    public static ProcessBuilder startInControlDirectory(ProcessBuilder builder, Path dir) {
        return builder.directory(dir.toFile());
    }
}
