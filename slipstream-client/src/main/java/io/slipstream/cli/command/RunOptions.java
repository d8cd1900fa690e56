package io.slipstream.cli.command;

import io.slipstream.api.wire.RunView;
import io.slipstream.cli.ApiClient;
import io.slipstream.cli.CliException;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Option;

/** How a run is started, shared by {@code run} and {@code submit}: overrides, idempotency key, waiting. */
final class RunOptions {
    @Option(names = "--set", paramLabel = "PATH=VALUE",
            description = {"Change this run only (repeatable): nodeGroups.worker.replicas=8, nodeGroups.worker.env.LR=0.1,",
                    "priority=5, maxRuntime=2h. The job itself is not changed."})
    List<String> sets = new ArrayList<>();

    @Option(names = "--label", paramLabel = "KEY=VALUE",
            description = {"A label of this run (repeatable), on top of its job's metadata.labels (the same key: this value).",
                    "Select runs by labels with get runs -l, cancel -l."})
    List<String> labels = new ArrayList<>();

    @Option(names = "--idempotency-key", paramLabel = "KEY",
            description = "Repeating the command with the same key within 24 h gives the same run, not a second one.")
    String idempotencyKey;

    @Option(names = "--wait", description = {"Wait until the run ends; exit 1 unless it SUCCEEDED, 4 as soon as it cannot start as things stand",
            "(it stays queued: its quota, the nodes or the job must change first)."})
    boolean await;

    @Option(names = "--timeout", paramLabel = "DURATION",
            description = "With --wait: stop waiting after this long (30s, 10m, 2h) and exit 5; the run goes on.")
    String timeout;

    /** {@code --timeout}, checked before anything is sent; {@code null} for none. */
    java.time.Duration timeout() {
        return Watch.timeout(await, timeout);
    }

    Map<String, String> overrides() {
        Map<String, String> overrides = new LinkedHashMap<>();
        for (String set : sets) {
            int eq = set.indexOf('=');
            if (eq <= 0) {
                throw new CliException(CliException.REJECTED, "--set '" + set + "' must be PATH=VALUE, e.g. nodeGroups.worker.replicas=8");
            }
            overrides.put(set.substring(0, eq), set.substring(eq + 1));
        }
        return overrides;
    }

    /** {@code --label k=v} as a map; the server checks keys and values (each problem at {@code labels.<key>}). */
    Map<String, String> labels() {
        Map<String, String> given = new LinkedHashMap<>();
        for (String label : labels) {
            int eq = label.indexOf('=');
            if (eq <= 0) {
                throw new CliException(CliException.REJECTED, "--label '" + label + "' must be KEY=VALUE, e.g. team=nlp");
            }
            given.put(label.substring(0, eq), label.substring(eq + 1));
        }
        return given;
    }

    /** Starts a run of an applied job and says so on {@code err}. */
    RunView start(ApiClient api, String workspace, String job, PrintWriter err) {
        Map<String, Object> request = new LinkedHashMap<>();
        request.put("workspace", workspace);
        request.put("job", job);
        return start(api, request, err);
    }

    /** Applies a Job document with {@code others} and starts a run of it, in one request, and says so on {@code err}. */
    RunView submit(ApiClient api, tools.jackson.databind.JsonNode jobDocument, List<tools.jackson.databind.JsonNode> others, PrintWriter err) {
        Map<String, Object> request = new LinkedHashMap<>();
        request.put("jobDocument", jobDocument);
        if (!others.isEmpty()) {
            request.put("documents", others);
        }
        return start(api, request, err);
    }

    private RunView start(ApiClient api, Map<String, Object> request, PrintWriter err) {
        timeout(); // refused before the run is made
        Map<String, String> overrides = overrides();
        if (!overrides.isEmpty()) {
            request.put("overrides", overrides);
        }
        Map<String, String> labels = labels();
        if (!labels.isEmpty()) {
            request.put("labels", labels);
        }
        // Always under a key (a fresh one if the user gave none): a submission whose commit succeeded but whose answer
        // was lost (a 503 STORE_UNAVAILABLE, a dropped connection) is sent again, and must not start a second run.
        String key = idempotencyKey != null ? idempotencyKey : "cli-" + java.util.UUID.randomUUID();
        ApiClient.Posted posted = api.postIdempotently("/api/v1/runs", request, key);
        RunView run = ApiClient.read(posted.body(), RunView.class);
        if (posted.replayed() && idempotencyKey != null) {
            // A replay of the CLI's own key is its own retry of this very submission: that run is the one it started.
            err.println("run " + run.id() + " already exists for idempotency key " + idempotencyKey + ": not started again (it is "
                    + run.state() + ")");
            return run;
        }
        err.println("started run " + run.id() + " of job " + run.workspace() + "/" + run.job() + " (version " + run.jobVersion() + ")"
                + (overrides.isEmpty() ? "" : " with " + overrides.size() + " override(s)"));
        return run;
    }

    /**
     * Prints the run's id last; with {@code --wait}, first waits for its end, for as long as it could start and
     * {@code --timeout} allows. Returns the exit code.
     */
    int finish(ApiClient api, String runId, PrintWriter out, PrintWriter err) {
        int exit = 0;
        java.time.Duration limit = timeout();
        if (!await) {
            err.println("follow it with: " + io.slipstream.cli.Hints.command() + " logs -f " + runId);
        } else {
            err.flush();
            java.time.Instant deadline = limit == null ? null : java.time.Instant.now().plus(limit);
            RunView done = Runs.awaitWhileItCouldStart(api, runId, err, deadline);
            if (Runs.succeeded(done)) {
                err.println(Runs.statusLine(done));
            } else if (done.state().isFinal()) {
                err.println("run " + done.id() + " ended " + done.state() + ": " + done.reason());
                exit = CliException.RUN_FAILED;
            } else if (Runs.cannotStart(done)) {
                err.println("run " + done.id() + " cannot start as things stand (" + done.queue().reason() + "): " + done.queue().message());
                err.println("it stays queued until that changes; to drop it: " + io.slipstream.cli.Hints.command() + " cancel " + done.id());
                exit = CliException.CANNOT_START;
            } else {
                err.println("stopped waiting after " + (limit == null ? "an interrupt" : timeout) + "; the run goes on: " + Runs.statusLine(done));
                exit = CliException.TIMED_OUT;
            }
        }
        err.flush();
        out.println(runId);
        out.flush();
        return exit;
    }
}
