package io.slipstream.cli.command;

import java.io.PrintWriter;
import java.util.concurrent.Callable;
import picocli.AutoComplete;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

@Command(name = "completion", description = {"Print a shell completion script for every command and option.",
        "bash: source <(./slipstream completion bash)   (or save it in /etc/bash_completion.d/slipstream)",
        "zsh:  source <(./slipstream completion zsh)    (loads bash completion through bashcompinit)"})
public final class CompletionCommand implements Callable<Integer> {
    enum Shell {
        bash, zsh
    }

    @Spec
    CommandSpec spec;

    @Parameters(paramLabel = "SHELL", description = "bash or zsh.")
    Shell shell;

    @Override
    public Integer call() {
        // picocli's script is bash; under zsh it first runs compinit and bashcompinit itself (see its header), so the
        // same script serves both. It completes the command name as typed, ./slipstream included (bash falls back to
        // the name after the last slash).
        String script = AutoComplete.bash(spec.root().name(), spec.root().commandLine());
        PrintWriter out = spec.commandLine().getOut();
        if (shell == Shell.zsh) {
            out.println("# zsh: bash completion through bashcompinit");
            out.println("autoload -U +X compinit && compinit");
            out.println("autoload -U +X bashcompinit && bashcompinit");
        }
        out.print(script);
        out.flush();
        return 0;
    }
}
