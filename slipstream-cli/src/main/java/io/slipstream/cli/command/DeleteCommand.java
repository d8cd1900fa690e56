package io.slipstream.cli.command;

import io.slipstream.cli.CliException;
import io.slipstream.cli.ClientOptions;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

@Command(name = "delete", description = {"Delete an object: secret WS/NAME, job WS/NAME, quota WS/NAME, workspace NAME, shape NAME.",
        "Runs keep what they were created with; a run that refers to a deleted secret and starts later fails with the reason."})
public final class DeleteCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Mixin
    ClientOptions client;

    @Parameters(index = "0", paramLabel = "TYPE", description = "secret | job | quota | workspace | shape")
    String type;

    @Parameters(index = "1", paramLabel = "NAME", description = "WORKSPACE/NAME for a secret, job or quota (or NAME with --workspace); NAME otherwise.")
    String name;

    @Mixin
    WorkspaceOption workspaceOption;

    @Override
    public Integer call() {
        String workspace = workspaceOption.get(spec.commandLine().getErr());
        String what;
        String path = switch (type) {
            case "secret", "secrets", "job", "jobs", "quota", "quotas" -> {
                String[] qualified = GetCommand.qualified(type, name, workspace);
                String kind = type.endsWith("s") ? type : type + "s";
                what = kind.substring(0, kind.length() - 1);
                yield "/api/v1/workspaces/" + Runs.encode(qualified[0]) + "/" + kind + "/" + Runs.encode(qualified[1]);
            }
            case "workspace", "workspaces", "ws" -> {
                what = "workspace";
                yield "/api/v1/workspaces/" + Runs.encode(name);
            }
            case "shape", "shapes" -> {
                what = "shape";
                yield "/api/v1/shapes/" + Runs.encode(name);
            }
            default -> throw new CliException(CliException.REJECTED, "unknown type '" + type + "': use secret, job, quota, workspace or shape");
        };
        client.client().delete(path);
        spec.commandLine().getOut().println("deleted " + what + " " + name);
        spec.commandLine().getOut().flush();
        return 0;
    }
}
