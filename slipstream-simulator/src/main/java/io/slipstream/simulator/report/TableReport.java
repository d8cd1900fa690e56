package io.slipstream.simulator.report;

import io.slipstream.simulator.input.Experiment;
import io.slipstream.simulator.input.ExperimentWarnings;
import io.slipstream.simulator.input.Warning;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/** The results as aligned text tables: one row per policy, then one table of tenants per policy. */
public final class TableReport {
    private TableReport() {
    }

    public static void print(Experiment experiment, List<PolicyResult> results, PrintWriter out) {
        out.println("Experiment " + experiment.name() + ": " + experiment.trace().jobs().size() + " jobs of " + experiment.trace().tenants().size()
                + " tenants from " + experiment.trace().source() + ", on " + experiment.cluster().describe() + ", seed " + experiment.seed());
        experiment.notes().forEach(note -> out.println("  " + note));
        out.println();
        List<List<String>> rows = new ArrayList<>();
        rows.add(List.of("policy", "utilization (busy window)", "utilization (whole replay)", "mean delay*", "p50 delay*", "p95 delay*", "p99 delay*",
                "mean JCT*", "not started", "not started GPU-h", "preemptions", "lost GPU-h", "borrowed GPU-h", "reclaims", "p99 reclaim", "max reclaim",
                "p99 guarantee wait", "fairness index", "wall"));
        for (PolicyResult r : results) {
            rows.add(List.of(r.policy().name(), Format.percent(r.windowUtilization()), Format.percent(r.utilization()), Format.duration(r.queueDelay().mean()),
                    Format.duration(r.queueDelay().percentile(50)), Format.duration(r.queueDelay().percentile(95)),
                    Format.duration(r.queueDelay().percentile(99)), Format.duration(r.completionTime().mean()), String.format(Locale.ROOT, "%,d", r.neverStarted()),
                    Format.number(r.neverStartedGpuHours()), String.valueOf(r.preemptions()),
                    Format.number(r.lostGpuHours()) + " (" + Format.percent(r.allocatedGpuHours() == 0 ? 0 : r.lostGpuHours() / r.allocatedGpuHours()) + ")",
                    Format.number(r.borrowedGpuHours()), String.valueOf(r.reclaim().count()), Format.duration(r.reclaim().percentile(99)),
                    Format.duration(r.reclaim().max()), Format.duration(r.guaranteeWait().percentile(99)), ratio(r.fairnessIndex()),
                    String.format(Locale.ROOT, "%.1fs", r.wallSeconds())));
        }
        table(rows, out);
        out.println(NOTE);
        if (ElasticReport.any(results)) {
            out.println();
            out.println("Elastic jobs:");
            table(ElasticReport.rows(results), out);
            out.println(ElasticReport.NOTE);
        }
        if (TopologyReport.any(results)) {
            out.println();
            out.println("Topology (" + experiment.cluster().describeTopology() + "):");
            table(TopologyReport.rows(results), out);
            out.println(TopologyReport.NOTE);
        }
        for (PolicyResult r : results) {
            out.println();
            out.println("Tenants under " + r.policy().name() + ":");
            List<List<String>> tenantRows = new ArrayList<>();
            tenantRows.add(List.of("tenant", "quota GPUs", "jobs", "done", "not started", "not started GPU-h", "mean delay*", "p99 delay*", "GPU-h",
                    "borrowed GPU-h", "entitled GPU-h", "borrowed/entitled", "lent GPU-h", "preempted", "reclaims", "p50 reclaim", "p99 reclaim", "max reclaim"));
            for (TenantResult t : r.tenants()) {
                tenantRows.add(List.of(t.tenant(), String.valueOf(t.quotaGpus()), String.valueOf(t.jobs()), String.valueOf(t.completed()),
                        String.valueOf(t.neverStarted()), Format.number(t.neverStartedGpuHours()),
                        Format.duration(t.queueDelay().mean()), Format.duration(t.queueDelay().percentile(99)), Format.number(t.allocatedGpuHours()),
                        Format.number(t.borrowedGpuHours()), Format.number(t.entitledGpuHours()), ratio(t.entitlementRatio()),
                        Format.number(t.lentGpuHours()), String.valueOf(t.preempted()),
                        String.valueOf(t.reclaim().count()), Format.duration(t.reclaim().percentile(50)), Format.duration(t.reclaim().percentile(99)),
                        Format.duration(t.reclaim().max())));
            }
            table(tenantRows, out);
            if (!r.longestReclaims().isEmpty()) {
                ReclaimSample worst = r.longestReclaims().get(0);
                out.println("Longest reclaim: " + describe(worst));
            }
        }
        List<Warning> warnings = ExperimentWarnings.of(experiment, results.stream().map(r -> r.policy().name()).toList());
        if (!warnings.isEmpty()) {
            // Only counted here: the command prints them on standard error before the replay, once.
            out.println();
            out.printf(Locale.ROOT, "%d warning%s (on standard error, before the replay): figures above may be skewed by %s.%n", warnings.size(),
                    warnings.size() == 1 ? "" : "s", warnings.size() == 1 ? "it" : "them");
        }
    }

    static final String NOTE = "* over the jobs that started (JCT: that completed); jobs never started are counted apart, not in the delays. "
            + "Busy window: first to last submission; whole replay: to the last completion.";

    /** The longest reclaim taken apart, in words. */
    static String describe(ReclaimSample s) {
        return String.format(Locale.ROOT, "%s of job %d (%s, %d GPUs): clock from %.0f s, victims chosen in %d cycle%s (%d in all), the last %s s after the "
                        + "clock started; it started %s s after them", Format.duration(s.seconds()), s.jobIndex(), s.tenant(), s.gpus(), s.from(),
                s.rounds(), s.rounds() == 1 ? "" : "s", s.victims(), trimmed(s.lastVictimsAt() - s.from()), trimmed(s.afterLastVictims()));
    }

    private static String trimmed(double seconds) {
        return seconds == Math.rint(seconds) ? String.format(Locale.ROOT, "%.0f", seconds) : String.format(Locale.ROOT, "%.1f", seconds);
    }

    private static void table(List<List<String>> rows, PrintWriter out) {
        int[] widths = new int[rows.get(0).size()];
        for (List<String> row : rows) {
            for (int i = 0; i < row.size(); i++) {
                widths[i] = Math.max(widths[i], row.get(i).length());
            }
        }
        for (List<String> row : rows) {
            StringBuilder line = new StringBuilder();
            for (int i = 0; i < row.size(); i++) {
                String cell = row.get(i);
                if (i == 0) {
                    line.append(cell).append(" ".repeat(widths[i] - cell.length()));
                } else {
                    line.append("  ").append(" ".repeat(widths[i] - cell.length())).append(cell);
                }
            }
            out.println(line.toString().stripTrailing());
        }
    }

    /** {@code 0.93}, or {@code -} for none. */
    private static String ratio(double value) {
        return Double.isNaN(value) ? "-" : String.format(Locale.ROOT, "%.2f", value);
    }
}
