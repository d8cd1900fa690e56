package io.slipstream.cli.command;

import io.slipstream.cli.CliException;
import java.io.PrintWriter;
import picocli.CommandLine.Option;

/**
 * {@code --workspace WS}. The short {@code -w} still works but is deprecated: in kubectl {@code -w} means watch, and
 * it will here, too, in a later release (docs/cli.md). Until then it says so on stderr, so no script breaks silently.
 */
final class WorkspaceOption {
    static final String DEPRECATION = "warning: -w is deprecated and will mean --watch (as in kubectl) in a later release; use --workspace";

    @Option(names = "--workspace", paramLabel = "WORKSPACE",
            description = "The workspace: of the named job, quota or secret, or the only one listed. WORKSPACE/NAME works, too.")
    String workspace;

    @Option(names = "-w", hidden = true, paramLabel = "WORKSPACE", description = "Deprecated: --workspace.")
    String deprecated;

    /** The workspace given, or null; warns on {@code err} when it came through {@code -w}. */
    String get(PrintWriter err) {
        if (deprecated != null) {
            err.println(DEPRECATION);
            err.flush();
        }
        return resolve(workspace, deprecated);
    }

    static String resolve(String longForm, String shortForm) {
        if (longForm != null && shortForm != null && !longForm.equals(shortForm)) {
            throw new CliException(CliException.REJECTED, "--workspace " + longForm + " and -w " + shortForm + " disagree: give one");
        }
        return longForm != null ? longForm : shortForm;
    }
}
