package io.slipstream.cli.command;

import io.slipstream.api.codec.DocumentParser;
import io.slipstream.api.codec.Json;
import io.slipstream.api.problem.Problem;
import io.slipstream.cli.ApiClient;
import io.slipstream.cli.CliException;
import io.slipstream.cli.ClientOptions;
import io.slipstream.cli.Output;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ArrayNode;

@Command(name = "apply", description = {"Create or update workspaces, shapes, quotas, jobs and secrets from YAML or JSON documents.",
        "Every document of every -f is applied in one request: all or nothing."})
public final class ApplyCommand implements Callable<Integer> {
    private static final Pattern DOCUMENT = Pattern.compile("^documents\\[(\\d+)]\\.?");

    @Spec
    CommandSpec spec;

    @Mixin
    ClientOptions client;

    @Option(names = {"-f", "--file"}, required = true, paramLabel = "FILE",
            description = {"File with one or more documents ('-' reads standard input); repeatable.",
                    "A directory stands for its *.yaml, *.yml and *.json files, sorted by name (not its subdirectories)."})
    List<String> files;

    @Option(names = "--dry-run", paramLabel = "MODE", defaultValue = "none",
            description = "server: the server checks everything and says what would be created, updated or unchanged, writing nothing.")
    String dryRun;

    @Override
    public Integer call() {
        boolean dry = switch (dryRun) {
            case "none" -> false;
            case "server" -> true;
            case "client" -> throw new CliException(CliException.REJECTED,
                    "--dry-run=client is not supported: only the server can check references and versions; use --dry-run=server");
            default -> throw new CliException(CliException.REJECTED, "--dry-run: '" + dryRun + "' must be server (or none)");
        };
        List<Inputs.Source> sources = Inputs.readAll(files);
        ApiClient api = client.client();
        String path = "/api/v1/apply" + (dry ? "?dryRun=true" : "");
        JsonNode result;
        if (sources.size() == 1) {
            result = api.post(path, sources.get(0).bytes(), "application/yaml");
        } else {
            List<Integer> firsts = new ArrayList<>(); // where each file's documents start in the one request
            ArrayNode all = Json.mapper().createArrayNode();
            for (Inputs.Source source : sources) {
                firsts.add(all.size());
                List<JsonNode> documents;
                try {
                    documents = DocumentParser.parse(source.bytes());
                } catch (io.slipstream.api.problem.InvalidInputException e) {
                    throw new CliException(CliException.REJECTED, source.name() + ": " + e.getMessage(), e.problems());
                }
                documents.forEach(all::add);
            }
            firsts.add(all.size());
            try {
                result = api.post(path, Json.mapper().writeValueAsBytes(all), "application/json");
            } catch (CliException e) {
                throw new CliException(e.exitCode(), e.getMessage(), e.problems().stream().map(p -> located(p, sources, firsts)).toList());
            }
        }
        List<List<String>> rows = new ArrayList<>();
        for (JsonNode item : result.get("items")) {
            String workspace = Output.text(item, "workspace");
            rows.add(List.of(Output.text(item, "kind"), (workspace.isEmpty() ? "" : workspace + "/") + Output.text(item, "name"),
                    Output.text(item, "action") + (dry ? " (dry run)" : ""), Output.text(item, "version")));
        }
        Output.table(spec.commandLine().getOut(), List.of("KIND", "NAME", "ACTION", "VERSION"), rows);
        if (dry) {
            spec.commandLine().getErr().println("dry run: the server checked " + rows.size() + " document(s) and wrote nothing");
            spec.commandLine().getErr().flush();
        }
        return 0;
    }

    /**
     * {@code documents[5].spec.x} of the one request as {@code b.yaml: documents[1].spec.x} (or {@code b.yaml: spec.x}
     * for a file of one document): where the user can find it. {@code firsts}: where each file's documents start, and
     * the total last.
     */
    static Problem located(Problem problem, List<Inputs.Source> sources, List<Integer> firsts) {
        Matcher m = DOCUMENT.matcher(problem.field());
        if (!m.find()) {
            return problem;
        }
        int index = Integer.parseInt(m.group(1));
        int file = 0;
        while (file + 2 < firsts.size() && firsts.get(file + 1) <= index) {
            file++;
        }
        int count = firsts.get(file + 1) - firsts.get(file);
        String rest = problem.field().substring(m.end());
        String where = count == 1 ? rest : "documents[" + (index - firsts.get(file)) + "]" + (rest.isEmpty() ? "" : "." + rest);
        return new Problem(sources.get(file).name() + ": " + where, problem.message());
    }
}
