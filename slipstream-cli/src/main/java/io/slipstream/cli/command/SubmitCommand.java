package io.slipstream.cli.command;

import io.slipstream.api.codec.DocumentParser;
import io.slipstream.api.codec.Json;
import io.slipstream.api.wire.RunView;
import io.slipstream.cli.ApiClient;
import io.slipstream.cli.CliException;
import io.slipstream.cli.ClientOptions;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
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

    @Option(names = "--wait", description = "Wait until the run ends; exit 1 unless it SUCCEEDED.")
    boolean await;

    @Override
    public Integer call() {
        ApiClient api = client.client();
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        String runId = submit(api, Inputs.read(file), file, err);
        if (!await) {
            err.println("follow it with: slipstream logs -f " + runId);
        }
        err.flush();
        int exit = 0;
        if (await) {
            RunView done = Runs.await(api, runId, err);
            if (!Runs.succeeded(done)) {
                err.println("run " + done.id() + " ended " + done.state() + ": " + done.reason());
                exit = CliException.RUN_FAILED;
            }
        }
        out.println(runId);
        out.flush();
        return exit;
    }

    /**
     * Applies every document of the input in one request (all or nothing: a bad Job leaves nothing behind), then
     * starts a run of its one Job; returns the new run's id.
     */
    static String submit(ApiClient api, byte[] input, String file, PrintWriter err) {
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
        Map<String, String> request = Map.of("workspace", metadata.path("workspace").asString(""), "job", metadata.path("name").asString(""));
        RunView run = ApiClient.read(api.postJson("/api/v1/runs", request), RunView.class);
        err.println("submitted run " + run.id() + " of job " + run.workspace() + "/" + run.job() + " (version " + run.jobVersion() + ")");
        return run.id();
    }
}
