package io.slipstream.cli;

import io.slipstream.api.problem.Problem;
import java.util.List;

/** Ends a command with a message for the user and one of the documented exit codes. */
public final class CliException extends RuntimeException {
    public static final int RUN_FAILED = 1;
    public static final int REJECTED = 2;
    public static final int UNREACHABLE = 3;
    /** {@code --wait} ended before the run did: as things stand it never starts (it stays queued). */
    public static final int CANNOT_START = 4;
    /** {@code --wait} ended before the run did: {@code --timeout} passed (it goes on). */
    public static final int TIMED_OUT = 5;

    private final int exitCode;
    private final List<Problem> problems;

    public CliException(int exitCode, String message) {
        this(exitCode, message, List.of());
    }

    public CliException(int exitCode, String message, List<Problem> problems) {
        super(message, null, false, false);
        this.exitCode = exitCode;
        this.problems = problems == null ? List.of() : List.copyOf(problems);
    }

    public int exitCode() {
        return exitCode;
    }

    public List<Problem> problems() {
        return problems;
    }
}
