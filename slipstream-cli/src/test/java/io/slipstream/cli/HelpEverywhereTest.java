package io.slipstream.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** Every command of the tree, including one added later, answers {@code --help} and {@code slipstream help ...} with exit 0. */
class HelpEverywhereTest {
    private record Result(int exit, String out, String err) {
    }

    private static Result cli(List<String> args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code = Main.execute(args.toArray(String[]::new), new PrintWriter(out, true), new PrintWriter(err, true));
        return new Result(code, out.toString(), err.toString());
    }

    /** The path of every command below the root: [get], [token, create], ... */
    private static List<List<String>> paths(CommandLine command, List<String> prefix) {
        List<List<String>> paths = new ArrayList<>();
        for (var entry : command.getSubcommands().entrySet()) {
            if (!entry.getKey().equals(entry.getValue().getCommandName())) {
                continue; // an alias: the command itself is walked under its name
            }
            List<String> path = new ArrayList<>(prefix);
            path.add(entry.getKey());
            paths.add(path);
            paths.addAll(paths(entry.getValue(), path));
        }
        return paths;
    }

    @Test
    void everyCommandAnswersHelpWithItsUsageAndExitZero() {
        List<List<String>> paths = paths(new CommandLine(new Main()), List.of());
        assertThat(paths).contains(List.of("get"), List.of("token", "create"), List.of("help"));
        for (List<String> path : paths) {
            for (String flag : List.of("--help", "-h")) {
                List<String> args = new ArrayList<>(path);
                args.add(flag);
                Result result = cli(args);
                assertThat(result.exit()).as("%s: %s", args, result.err()).isZero();
                assertThat(result.out()).as("%s", args).contains("Usage: slipstream " + String.join(" ", path) + " ");
            }
        }
    }

    @Test
    void theHelpCommandShowsTheRootOrANamedCommand() {
        Result root = cli(List.of("help"));
        assertThat(root.exit()).isZero();
        assertThat(root.out()).startsWith("Usage: slipstream").contains("get", "apply", "help");
        Result get = cli(List.of("help", "get"));
        assertThat(get.exit()).isZero();
        assertThat(get.out()).startsWith("Usage: slipstream get").contains("TYPE");
        Result group = cli(List.of("help", "token"));
        assertThat(group.exit()).as(group.err()).isZero();
        assertThat(group.out()).startsWith("Usage: slipstream token").contains("create", "revoke");
    }

    @Test
    void helpDoesNotAskForRequiredParametersAndVersionWorks() {
        Result help = cli(List.of("get", "--help"));
        assertThat(help.err()).doesNotContain("Missing required");
        Result version = cli(List.of("--version"));
        assertThat(version.exit()).isZero();
        assertThat(version.out()).contains("slipstream 0.1.0");
        assertThat(cli(List.of()).exit()).isEqualTo(CliException.REJECTED);
    }
}
