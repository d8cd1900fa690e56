package io.slipstream.cli.command;

import io.slipstream.api.codec.DocumentParser;
import io.slipstream.api.codec.Json;
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
import tools.jackson.databind.node.ArrayNode;

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
     * Applies every document of the input in one request (all or nothing: a bad Job leaves nothing behind), then
     * starts a run of its one Job; returns the new run's id.
     */
    static String submit(ApiClient api, byte[] input, String file, RunOptions options, PrintWriter err) {
        options.timeout(); // refused before anything is applied
        List<JsonNode> documents = DocumentParser.parse(input);
        List<JsonNode> jobs = new ArrayList<>();
        ArrayNode all = Json.mapper().createArrayNode();
        for (JsonNode document : documents) {
            if (document.isObject() && "Job".equals(document.path("kind").asString(""))) {
                jobs.add(document);
            }
            all.add(document);
        }
        if (jobs.size() != 1) {
            throw new CliException(CliException.REJECTED, file + " must hold exactly one Job to submit (it holds " + jobs.size() + ")");
        }
        byte[] body = Json.mapper().writeValueAsBytes(documents.size() == 1 ? documents.get(0) : all);
        api.post("/api/v1/apply", body, "application/json");
        JsonNode metadata = jobs.get(0).path("metadata");
        return options.start(api, metadata.path("workspace").asString(""), metadata.path("name").asString(""), err).id();
    }
}
