package io.slipstream.cli.command;

import io.slipstream.api.codec.DocumentParser;
import io.slipstream.api.codec.Json;
import io.slipstream.api.problem.Problem;
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

    /** Applies the other documents of the input, then submits its one Job; returns the new run's id. */
    static String submit(ApiClient api, byte[] input, String file, PrintWriter err) {
        List<JsonNode> documents = DocumentParser.parse(input);
        List<JsonNode> jobs = new ArrayList<>();
        ArrayNode others = Json.mapper().createArrayNode();
        for (JsonNode document : documents) {
            if (document.isObject() && "Job".equals(document.path("kind").asString(""))) {
                jobs.add(document);
            } else {
                others.add(document);
            }
        }
        if (jobs.size() != 1) {
            throw new CliException(CliException.REJECTED, file + " must hold exactly one Job to submit (it holds " + jobs.size() + ")");
        }
        if (!others.isEmpty()) {
            api.post("/api/v1/apply", Json.mapper().writeValueAsBytes(others), "application/json");
        }
        RunView run;
        try {
            run = ApiClient.read(api.postJson("/api/v1/runs", Map.of("jobDocument", jobs.get(0))), RunView.class);
        } catch (CliException e) {
            // The API names fields inside its request body; the user wrote the document itself.
            List<Problem> problems = e.problems().stream()
                    .map(p -> new Problem(p.field().startsWith("jobDocument.") ? p.field().substring("jobDocument.".length()) : p.field(), p.message()))
                    .toList();
            throw new CliException(e.exitCode(), e.getMessage(), problems);
        }
        err.println("submitted run " + run.id() + " of job " + run.workspace() + "/" + run.job());
        return run.id();
    }
}
