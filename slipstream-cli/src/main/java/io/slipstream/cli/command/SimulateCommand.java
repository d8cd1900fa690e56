package io.slipstream.cli.command;

import io.slipstream.cli.CliException;
import io.slipstream.simulator.Simulator;
import io.slipstream.simulator.input.Experiment;
import io.slipstream.simulator.input.ExperimentReader;
import io.slipstream.simulator.input.ExperimentWarnings;
import io.slipstream.simulator.input.Warning;
import io.slipstream.simulator.report.HtmlReport;
import io.slipstream.simulator.report.JsonReport;
import io.slipstream.simulator.report.PolicyResult;
import io.slipstream.simulator.report.ProgressLine;
import io.slipstream.simulator.report.TableReport;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

/** Replays a trace against the scheduling core, once per policy of an experiment file; needs no server. */
@Command(name = "simulate", description = {"Replay a job trace on a simulated cluster, once per policy of an experiment file,",
        "with the same scheduling core the server runs; compare utilization, queueing delay, preemptions, work lost",
        "and how fast lenders get their guarantee back. See docs/simulation.md."})
public final class SimulateCommand implements Callable<Integer> {
    enum Format {
        table, json
    }

    @Spec
    CommandSpec spec;

    @Parameters(index = "0", paramLabel = "FILE", description = "The experiment file (YAML), e.g. examples/simulation/elasticflow.yaml.")
    Path file;

    @Option(names = {"-o", "--output"}, defaultValue = "table", description = "table (default) or json: one object per policy.")
    Format output;

    @Option(names = "--html", paramLabel = "FILE", description = "Also write a self-contained HTML report with plots to FILE.")
    Path html;

    @Option(names = "--policy", paramLabel = "NAME", description = "Run only this policy (repeatable).")
    List<String> policies = List.of();

    @Option(names = {"-q", "--quiet"}, description = "No progress on standard error.")
    boolean quiet;

    @Override
    public Integer call() throws IOException {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        Experiment experiment = ExperimentReader.read(file);
        // Before the replay: a warning that costs minutes to learn afterwards costs nothing now. Printed even with -q.
        for (Warning warning : ExperimentWarnings.of(experiment)) {
            if (policies.isEmpty() || warning.policy() == null || policies.contains(warning.policy())) {
                err.println("warning: " + warning.message());
            }
        }
        err.flush();
        List<PolicyResult> results = Simulator.run(experiment, new LinkedHashSet<>(policies), quiet ? null : (policy, virtual, last, done, total) -> {
            err.println(ProgressLine.format(policy, virtual, last, done, total));
            err.flush();
        });
        if (output == Format.json) {
            out.println(JsonReport.render(experiment, results));
        } else {
            TableReport.print(experiment, results, out);
        }
        if (html != null) {
            try {
                Files.writeString(html, HtmlReport.render(experiment, results), StandardCharsets.UTF_8);
            } catch (IOException e) {
                throw new CliException(CliException.REJECTED, "could not write the report to " + html + ": " + e.getMessage());
            }
            if (!quiet) {
                err.println("report written to " + html);
            }
        }
        out.flush();
        return 0;
    }
}
