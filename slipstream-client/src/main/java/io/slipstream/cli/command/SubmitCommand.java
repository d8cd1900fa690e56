package io.slipstream.cli.command;

import io.slipstream.api.codec.DocumentParser;
import io.slipstream.cli.ApiClient;
import io.slipstream.cli.CliException;
import io.slipstream.cli.ClientOptions;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;
import tools.jackson.databind.JsonNode;

@Command(name = "submit",
        description = {"Apply a Job (and any other documents in the file) and start a run of it.",
                "Prints the new run's id alone on its last line."})
public final class SubmitCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Mixin
    ClientOptions client;

    @Option(names = {"-f", "--file"}, required = true, paramLabel = "FILE", description = "File holding exactly one Job, and optionally other documents.")
    String file;

    @Mixin
    RunOptions run;

    @Override
    public Integer call() {
        ApiClient api = client.client();
        PrintWriter err = spec.commandLine().getErr();
        String runId = submit(api, Inputs.read(file), file, run, err);
        return run.finish(api, runId, spec.commandLine().getOut(), err);
    }

    /**
     * Applies every document of the input and starts a run of its one Job, in one request (all or nothing: a bad
     * document, or a run refused at creation, leaves nothing behind); returns the new run's id.
     */
    static String submit(ApiClient api, byte[] input, String file, RunOptions options, PrintWriter err) {
        options.timeout(); // refused before anything is sent
        List<JsonNode> jobs = new ArrayList<>();
        List<JsonNode> others = new ArrayList<>();
        for (JsonNode document : DocumentParser.parse(input)) {
            if (document.isObject() && "Job".equals(document.path("kind").asString(""))) {
                jobs.add(document);
            } else {
                others.add(document);
            }
        }
        if (jobs.size() != 1) {
            throw new CliException(CliException.REJECTED, file + " must hold exactly one Job to submit (it holds " + jobs.size() + ")");
        }
        return options.submit(api, jobs.get(0), others, err).id();
    }
}
