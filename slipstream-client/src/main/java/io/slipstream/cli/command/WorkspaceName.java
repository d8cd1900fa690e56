package io.slipstream.cli.command;

import io.slipstream.cli.CliException;

/**
 * A workspace-scoped name as every command takes it: {@code WORKSPACE/NAME}, or {@code NAME} with
 * {@code --workspace WORKSPACE} (both at once only if they agree).
 */
record WorkspaceName(String workspace, String name) {
    /** {@code kind} names what is named, for the messages: job, quota, secret. */
    static WorkspaceName parse(String kind, String text, String workspace) {
        if (text == null || text.isBlank()) {
            throw new CliException(CliException.REJECTED, "name the " + kind + ": WORKSPACE/NAME, or NAME --workspace WORKSPACE");
        }
        if (workspace != null && workspace.isBlank()) {
            throw new CliException(CliException.REJECTED, "--workspace is empty");
        }
        int slash = text.indexOf('/');
        if (slash < 0) {
            if (workspace == null) {
                throw new CliException(CliException.REJECTED,
                        "name the workspace of the " + kind + " '" + text + "': WORKSPACE/NAME, or NAME --workspace WORKSPACE");
            }
            return new WorkspaceName(workspace, text);
        }
        String ws = text.substring(0, slash);
        String name = text.substring(slash + 1);
        if (ws.isEmpty() || name.isEmpty() || name.contains("/")) {
            throw new CliException(CliException.REJECTED, kind + " '" + text + "' must be WORKSPACE/NAME (one '/')");
        }
        if (workspace != null && !workspace.equals(ws)) {
            throw new CliException(CliException.REJECTED, kind + " " + text + " names workspace " + ws + " but --workspace is " + workspace);
        }
        return new WorkspaceName(ws, name);
    }

    /** {@code /api/v1/workspaces/WS/KINDS/NAME}. */
    String path(String kinds) {
        return "/api/v1/workspaces/" + Runs.encode(workspace) + "/" + kinds + "/" + Runs.encode(name);
    }

    @Override
    public String toString() {
        return workspace + "/" + name;
    }
}
