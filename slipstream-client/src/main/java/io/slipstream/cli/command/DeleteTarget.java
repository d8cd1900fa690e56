package io.slipstream.cli.command;

import io.slipstream.api.spec.Kind;
import io.slipstream.cli.CliException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import tools.jackson.databind.JsonNode;

/** One object {@code delete} removes: from {@code TYPE NAME...}, {@code TYPE/NAME...} (as {@code get -o name} prints) or a document. */
record DeleteTarget(Kind kind, String workspace, String name) {
    /** {@code job}, {@code jobs}, {@code Job}, {@code ws}... to a kind; null if it is none. */
    static Kind kind(String type) {
        return switch (type.toLowerCase(Locale.ROOT)) {
            case "job", "jobs" -> Kind.Job;
            case "quota", "quotas" -> Kind.Quota;
            case "secret", "secrets" -> Kind.Secret;
            case "workspace", "workspaces", "ws" -> Kind.Workspace;
            case "shape", "shapes" -> Kind.Shape;
            case "topology", "topologies" -> Kind.Topology;
            default -> null;
        };
    }

    /**
     * {@code [job, team-a/train, team-a/eval]}, {@code [job/team-a/train, quota/team-a/gpus]}, or {@code [job, train]}
     * with a workspace.
     */
    static List<DeleteTarget> fromArguments(List<String> arguments, String workspace) {
        if (arguments.isEmpty()) {
            throw new CliException(CliException.REJECTED, "name what to delete: TYPE NAME (delete job team-a/train), TYPE/NAME, or -f FILE");
        }
        List<DeleteTarget> targets = new ArrayList<>();
        Kind first = arguments.get(0).contains("/") ? null : kind(arguments.get(0));
        if (first == null && !arguments.get(0).contains("/")) {
            throw unknown(arguments.get(0));
        }
        if (first != null) {
            if (arguments.size() == 1) {
                throw new CliException(CliException.REJECTED, "name the " + first.name().toLowerCase(Locale.ROOT) + " to delete: delete "
                        + arguments.get(0) + (first.workspaced() ? " WORKSPACE/NAME" : " NAME"));
            }
            for (String name : arguments.subList(1, arguments.size())) {
                targets.add(of(first, name, workspace));
            }
            return targets;
        }
        for (String argument : arguments) {
            int slash = argument.indexOf('/');
            Kind kind = slash < 0 ? null : kind(argument.substring(0, slash));
            if (kind == null) {
                throw slash < 0 ? new CliException(CliException.REJECTED, "'" + argument + "': give every object as TYPE/NAME, or the type once first")
                        : unknown(argument.substring(0, slash));
            }
            targets.add(of(kind, argument.substring(slash + 1), workspace));
        }
        return targets;
    }

    private static DeleteTarget of(Kind kind, String name, String workspace) {
        String what = kind.name().toLowerCase(Locale.ROOT);
        if (kind.workspaced()) {
            WorkspaceName named = WorkspaceName.parse(what, name, workspace);
            return new DeleteTarget(kind, named.workspace(), named.name());
        }
        if (name.isEmpty() || name.contains("/")) {
            throw new CliException(CliException.REJECTED, what + " '" + name + "': a " + what + " has a plain NAME");
        }
        return new DeleteTarget(kind, null, name);
    }

    private static CliException unknown(String type) {
        return new CliException(CliException.REJECTED, "unknown type '" + type + "': use job, quota, secret, workspace or shape");
    }

    /**
     * The objects the documents describe, last first: a file that makes a workspace and then its jobs is taken apart
     * jobs first (a workspace that still holds anything cannot be deleted).
     */
    static List<DeleteTarget> fromDocuments(String file, List<JsonNode> documents) {
        List<DeleteTarget> targets = new ArrayList<>();
        for (int i = 0; i < documents.size(); i++) {
            JsonNode document = documents.get(i);
            String where = file + (documents.size() > 1 ? " (document " + (i + 1) + ")" : "");
            Kind kind = kind(document.path("kind").asString(""));
            if (kind == null) {
                throw new CliException(CliException.REJECTED, where + ": kind '" + document.path("kind").asString("") + "' cannot be deleted; "
                        + "the kinds are Workspace, Shape, Topology, Quota, Job and Secret");
            }
            String name = document.path("metadata").path("name").asString("");
            String workspace = document.path("metadata").path("workspace").asString("");
            if (name.isEmpty() || kind.workspaced() && workspace.isEmpty()) {
                throw new CliException(CliException.REJECTED, where + ": metadata.name" + (kind.workspaced() ? " and metadata.workspace are" : " is")
                        + " needed to delete a " + kind);
            }
            targets.add(0, new DeleteTarget(kind, kind.workspaced() ? workspace : null, name));
        }
        return targets;
    }

    String path() {
        return switch (kind) {
            case Workspace -> "/api/v1/workspaces/" + Runs.encode(name);
            case Shape -> "/api/v1/shapes/" + Runs.encode(name);
            case Topology -> "/api/v1/topologies/" + Runs.encode(name);
            case Quota -> new WorkspaceName(workspace, name).path("quotas");
            case Job -> new WorkspaceName(workspace, name).path("jobs");
            case Secret -> new WorkspaceName(workspace, name).path("secrets");
        };
    }

    @Override
    public String toString() {
        return kind.name().toLowerCase(Locale.ROOT) + " " + (workspace == null ? name : workspace + "/" + name);
    }
}
