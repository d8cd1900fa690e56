package io.slipstream.simulator.report;

import io.slipstream.simulator.input.Experiment;
import io.slipstream.simulator.input.ExperimentWarnings;
import io.slipstream.simulator.input.Warning;
import java.util.List;
import java.util.Locale;

/**
 * A self-contained HTML page (inline CSS and SVG, no scripts, nothing fetched): the summary table, GPUs held per
 * tenant over time under each policy, and the CDFs of queueing delay and of the time lenders waited for their
 * guarantee.
 */
public final class HtmlReport {
    private static final String[] COLORS = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f",
            "#bab0ac", "#1f77b4", "#2ca02c"};
    private static final int WIDTH = 900;
    private static final int HEIGHT = 300;
    private static final int LEFT = 60;
    private static final int RIGHT = 20;
    private static final int TOP = 20;
    private static final int BOTTOM = 40;

    private HtmlReport() {
    }

    public static String render(Experiment experiment, List<PolicyResult> results) {
        StringBuilder html = new StringBuilder();
        html.append("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>Simulation: ").append(escape(experiment.name()))
                .append("</title>\n<style>body{font-family:system-ui,sans-serif;margin:2em;max-width:1000px;color:#222}"
                        + "table{border-collapse:collapse;margin:1em 0;font-size:13px}td,th{padding:3px 8px;border-bottom:1px solid #ddd;text-align:right}"
                        + "td:first-child,th:first-child{text-align:left}th{background:#f4f4f4}svg{display:block;margin:0.5em 0 1.5em}"
                        + ".legend span{display:inline-block;margin-right:1em;font-size:13px}.legend i{display:inline-block;width:10px;height:10px;margin-right:4px}"
                        + "</style></head><body>\n");
        html.append("<h1>Simulation: ").append(escape(experiment.name())).append("</h1>\n<p>")
                .append(String.format(Locale.ROOT, "%,d jobs of %d tenants from %s, on %s; seed %d.", experiment.trace().jobs().size(),
                        experiment.trace().tenants().size(), escape(experiment.trace().source()), escape(experiment.cluster().describe()), experiment.seed()))
                .append("</p>\n<ul>");
        experiment.notes().forEach(note -> html.append("<li>").append(escape(note)).append("</li>"));
        html.append("</ul>\n");
        List<Warning> warnings = ExperimentWarnings.of(experiment, results.stream().map(r -> r.policy().name()).toList());
        if (!warnings.isEmpty()) {
            html.append("<h2>Warnings</h2>\n<ul>");
            warnings.forEach(w -> html.append("<li>").append(escape(w.message())).append("</li>"));
            html.append("</ul>\n");
        }
        html.append("<h2>Summary</h2>\n");
        summary(results, html);
        html.append("<p>").append(escape(TableReport.NOTE)).append("</p>\n");
        if (ElasticReport.any(results)) {
            html.append("<h2>Elastic jobs</h2>\n");
            table(html, ElasticReport.rows(results), ElasticReport.NOTE);
        }
        if (TopologyReport.any(results)) {
            html.append("<h2>Topology</h2>\n<p>").append(escape(experiment.cluster().describeTopology())).append("</p>\n");
            table(html, TopologyReport.rows(results), TopologyReport.NOTE);
        }
        html.append("<h2>Queueing delay</h2>\n<p>Share of the jobs that started that waited at most so long in the queue (all attempts together); jobs that never started are not in it.</p>\n");
        cdf(results, true, html);
        html.append("<h2>Time to get a guarantee back</h2>\n<p>For each run that needed borrowers preempted to start on its quota's guarantee: "
                + "from the moment it was entitled to the capacity to its start.</p>\n");
        cdf(results, false, html);
        html.append("<h2>GPUs held per tenant</h2>\n");
        for (PolicyResult result : results) {
            html.append("<h3>").append(escape(result.policy().name())).append("</h3>\n");
            timeline(experiment, result, html);
            tenants(result, html);
        }
        html.append("</body></html>\n");
        return html.toString();
    }

    private static void summary(List<PolicyResult> results, StringBuilder html) {
        html.append("<table><tr><th>policy</th><th>utilization (busy window)</th><th>utilization (whole replay)</th><th>mean delay*</th><th>p50*</th><th>p95*</th>"
                + "<th>p99*</th><th>mean JCT*</th><th>not started</th><th>not started GPU-h</th>"
                + "<th>preemptions</th><th>lost GPU-h</th><th>borrowed GPU-h</th><th>reclaims</th><th>p99 reclaim</th><th>max reclaim</th>"
                + "<th>p99 guarantee wait</th></tr>\n");
        for (PolicyResult r : results) {
            html.append("<tr><td>").append(escape(r.policy().name())).append("</td>");
            cells(html, Format.percent(r.windowUtilization()), Format.percent(r.utilization()), Format.duration(r.queueDelay().mean()),
                    Format.duration(r.queueDelay().percentile(50)), Format.duration(r.queueDelay().percentile(95)), Format.duration(r.queueDelay().percentile(99)),
                    Format.duration(r.completionTime().mean()), String.valueOf(r.neverStarted()), Format.number(r.neverStartedGpuHours()), String.valueOf(r.preemptions()),
                    Format.number(r.lostGpuHours()) + " (" + Format.percent(r.allocatedGpuHours() == 0 ? 0 : r.lostGpuHours() / r.allocatedGpuHours()) + ")",
                    Format.number(r.borrowedGpuHours()), String.valueOf(r.reclaim().count()), Format.duration(r.reclaim().percentile(99)),
                    Format.duration(r.reclaim().max()), Format.duration(r.guaranteeWait().percentile(99)));
            html.append("</tr>\n");
        }
        html.append("</table>\n");
    }

    private static void tenants(PolicyResult r, StringBuilder html) {
        html.append("<details><summary>Tenants</summary><table><tr><th>tenant</th><th>quota GPUs</th><th>jobs</th><th>not started</th>"
                + "<th>not started GPU-h</th><th>mean delay*</th><th>p99 delay*</th><th>p99 delay, all jobs**</th><th>GPU-h</th><th>borrowed GPU-h</th><th>lent GPU-h</th><th>preempted</th><th>reclaims</th><th>p99 reclaim</th>"
                + "<th>max reclaim</th></tr>\n");
        for (TenantResult t : r.tenants()) {
            html.append("<tr><td>").append(escape(t.tenant())).append("</td>");
            cells(html, String.valueOf(t.quotaGpus()), String.valueOf(t.jobs()), String.valueOf(t.neverStarted()), Format.number(t.neverStartedGpuHours()),
                    Format.duration(t.queueDelay().mean()),
                    Format.duration(t.queueDelay().percentile(99)), Format.duration(t.queueDelayAtLeast().percentile(99)),
                    Format.number(t.allocatedGpuHours()), Format.number(t.borrowedGpuHours()),
                    Format.number(t.lentGpuHours()), String.valueOf(t.preempted()), String.valueOf(t.reclaim().count()),
                    Format.duration(t.reclaim().percentile(99)), Format.duration(t.reclaim().max()));
            html.append("</tr>\n");
        }
        html.append("</table><p>* of the jobs that started. ** of every job, one that never started counted as waiting until the replay ended"
                + " (at least that): a policy is not credited for the jobs it never starts.</p></details>\n");
        if (!r.longestReclaims().isEmpty()) {
            html.append("<p>Longest reclaim: ").append(escape(TableReport.describe(r.longestReclaims().get(0)))).append("</p>\n");
        }
    }

    private static void cells(StringBuilder html, String... values) {
        for (String value : values) {
            html.append("<td>").append(escape(value)).append("</td>");
        }
    }

    /**
     * A stacked area chart: average GPUs held by each tenant per time bucket, each bucket a flat step over its span,
     * with the cluster's capacity; time in the unit that suits the window (seconds to days).
     */
    private static void timeline(Experiment experiment, PolicyResult r, StringBuilder html) {
        double[][] series = r.timeline();
        if (series.length == 0 || series[0].length == 0) {
            return;
        }
        int buckets = series[0].length;
        double[][] stacked = new double[series.length][buckets];
        for (int b = 0; b < buckets; b++) {
            double below = 0;
            for (int i = 0; i < series.length; i++) {
                below += series[i][b];
                stacked[i][b] = below;
            }
        }
        double capacity = experiment.cluster().gpus();
        double maxY = capacity * 1.05;
        Ticks.TimeUnit unit = Ticks.TimeUnit.of(buckets * r.timelineBucketSeconds());
        double width = r.timelineBucketSeconds() / unit.seconds();
        double span = buckets * width;
        StringBuilder svg = open(html);
        axes(svg, linearTicks(0, span, 10), 0, span, false, maxY, linearTicks(0, maxY, 5), unit.label() + " from the first submission", "GPUs");
        for (int i = series.length - 1; i >= 0; i--) {
            StringBuilder path = new StringBuilder("M").append(fmt(x(0, 0, span))).append(',').append(fmt(y(0, maxY)));
            for (int b = 0; b < buckets; b++) {
                path.append('V').append(fmt(y(stacked[i][b], maxY))).append('H').append(fmt(x((b + 1) * width, 0, span)));
            }
            path.append('V').append(fmt(y(0, maxY))).append('Z');
            svg.append("<path d=\"").append(path).append("\" fill=\"").append(COLORS[i % COLORS.length]).append("\" stroke=\"none\"/>\n");
        }
        svg.append(String.format(Locale.ROOT, "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#000\" stroke-dasharray=\"4 3\"/>", LEFT, WIDTH - RIGHT,
                y(capacity, maxY), y(capacity, maxY)));
        svg.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%.1f\" font-size=\"11\">capacity %.0f GPUs</text>", LEFT + 5, y(capacity, maxY) - 4, capacity));
        svg.append("</svg>\n");
        html.append(svg);
        html.append("<div class=\"legend\">");
        for (int i = 0; i < r.tenants().size(); i++) {
            html.append("<span><i style=\"background:").append(COLORS[i % COLORS.length]).append("\"></i>").append(escape(r.tenants().get(i).tenant()))
                    .append("</span>");
        }
        html.append("</div>\n");
    }

    /** One line per policy: the share of values at or below x; queueing delays on a log scale. */
    private static void cdf(List<PolicyResult> results, boolean delays, StringBuilder html) {
        double max = 1;
        boolean any = false;
        for (PolicyResult r : results) {
            Distribution d = delays ? r.queueDelay() : r.reclaim();
            max = Math.max(max, d.max());
            any |= d.count() > 0;
        }
        if (!any) {
            html.append("<p><em>No such runs under any policy.</em></p>\n");
            return;
        }
        // Log scale for both: delays span seconds to days, reclaims cluster near the grace period with a long tail.
        double minX = 1;
        double maxX = Math.max(10, Ticks.durationAtLeast(max));
        StringBuilder svg = open(html);
        List<Tick> xTicks = Ticks.logDurations(minX, maxX).stream().map(v -> new Tick(v, Ticks.durationLabel(v))).toList();
        List<Tick> yTicks = Ticks.linear(0, 1, 5).stream().map(v -> new Tick(v, Format.percent(v).replace(".0%", "%"))).toList();
        axes(svg, xTicks, minX, maxX, true, 1, yTicks, "time (log scale; 1 s or less at the left)", "share of runs");
        for (int k = 0; k < results.size(); k++) {
            double[] values = (delays ? results.get(k).queueDelay() : results.get(k).reclaim()).values();
            if (values.length == 0) {
                continue;
            }
            String path = steps(values, minX, maxX);
            svg.append("<path d=\"").append(path).append("\" fill=\"none\" stroke-width=\"2\" stroke=\"").append(COLORS[k % COLORS.length]).append("\"/>\n");
        }
        svg.append("</svg>\n");
        html.append(svg);
        html.append("<div class=\"legend\">");
        for (int k = 0; k < results.size(); k++) {
            html.append("<span><i style=\"background:").append(COLORS[k % COLORS.length]).append("\"></i>").append(escape(results.get(k).policy().name()))
                    .append("</span>");
        }
        html.append("</div>\n");
    }

    /**
     * An empirical CDF as a path of steps: flat at 0 up to the first value, then up by each value's share where it
     * lies and flat to the next, flat at 100% to the right edge. Values in the same half pixel are one step, so a
     * line has at most about 1,700 steps whatever the sample.
     */
    private static String steps(double[] sorted, double minX, double maxX) {
        StringBuilder path = new StringBuilder("M").append(fmt(LEFT)).append(',').append(fmt(y(0, 1)));
        double lastX = LEFT;
        for (int i = 0; i < sorted.length; i++) {
            double px = logX(Math.max(minX, sorted[i]), minX, maxX);
            if (i + 1 < sorted.length && halfPixel(logX(Math.max(minX, sorted[i + 1]), minX, maxX)) == halfPixel(px)) {
                continue; // the next value's share replaces this one's
            }
            if (px > lastX) {
                path.append('H').append(fmt(px));
                lastX = px;
            }
            path.append('V').append(fmt(y((i + 1.0) / sorted.length, 1)));
        }
        return path.append('H').append(fmt(WIDTH - RIGHT)).toString();
    }

    private static long halfPixel(double px) {
        return (long) Math.floor(px * 2);
    }

    private static StringBuilder open(StringBuilder html) {
        StringBuilder svg = new StringBuilder();
        svg.append(String.format(Locale.ROOT, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"sans-serif\">%n",
                WIDTH, HEIGHT, WIDTH, HEIGHT));
        return svg;
    }

    /** A tick: where on its axis and what it reads. */
    record Tick(double value, String label) {
    }

    static List<Tick> linearTicks(double min, double max, int target) {
        double step = Ticks.step(min, max, target);
        return Ticks.linear(min, max, target).stream().map(v -> new Tick(v, Ticks.label(v, step))).toList();
    }

    private static void axes(StringBuilder svg, List<Tick> xTicks, double minX, double maxX, boolean logX, double maxY, List<Tick> yTicks, String xLabel,
            String yLabel) {
        int bottom = HEIGHT - BOTTOM;
        svg.append(String.format(Locale.ROOT, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#444\"/>", LEFT, bottom, WIDTH - RIGHT, bottom));
        svg.append(String.format(Locale.ROOT, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#444\"/>%n", LEFT, TOP, LEFT, bottom));
        for (Tick tick : xTicks) {
            tickX(svg, logX ? logX(tick.value(), minX, maxX) : x(tick.value(), minX, maxX), tick.label());
        }
        for (Tick tick : yTicks) {
            double py = y(tick.value(), maxY);
            svg.append(String.format(Locale.ROOT, "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#eee\"/>", LEFT + 1, WIDTH - RIGHT, py, py));
            svg.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%.1f\" font-size=\"11\" text-anchor=\"end\">%s</text>%n", LEFT - 5, py + 4,
                    escape(tick.label())));
        }
        svg.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\" font-size=\"12\" text-anchor=\"middle\">%s</text>", (LEFT + WIDTH - RIGHT) / 2, HEIGHT - 5,
                escape(xLabel)));
        svg.append(String.format(Locale.ROOT, "<text x=\"12\" y=\"%d\" font-size=\"12\" text-anchor=\"middle\" transform=\"rotate(-90 12 %d)\">%s</text>%n",
                (TOP + bottom) / 2, (TOP + bottom) / 2, escape(yLabel)));
    }

    private static void tickX(StringBuilder svg, double px, String label) {
        int bottom = HEIGHT - BOTTOM;
        svg.append(String.format(Locale.ROOT, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%d\" stroke=\"#444\"/>", px, px, bottom, bottom + 4));
        svg.append(String.format(Locale.ROOT, "<text x=\"%.1f\" y=\"%d\" font-size=\"11\" text-anchor=\"middle\">%s</text>%n", px, bottom + 16, escape(label)));
    }

    private static double x(double v, double min, double max) {
        return LEFT + (WIDTH - LEFT - RIGHT) * (max == min ? 0 : (v - min) / (max - min));
    }

    private static double logX(double v, double min, double max) {
        return LEFT + (WIDTH - LEFT - RIGHT) * (Math.log(v / min) / Math.log(max / min));
    }

    private static double y(double v, double max) {
        return HEIGHT - BOTTOM - (HEIGHT - BOTTOM - TOP) * (max == 0 ? 0 : v / max);
    }

    private static String fmt(double v) {
        return String.format(Locale.ROOT, "%.1f", v);
    }

    static String escape(String text) {
        return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&quot;");
    }

    /** A table of a header row and a row per policy (its name first), then its note. */
    private static void table(StringBuilder html, List<List<String>> rows, String note) {
        html.append("<table><tr>");
        rows.get(0).forEach(h -> html.append("<th>").append(escape(h)).append("</th>"));
        html.append("</tr>\n");
        for (List<String> row : rows.subList(1, rows.size())) {
            html.append("<tr><td>").append(escape(row.get(0))).append("</td>");
            cells(html, row.subList(1, row.size()).toArray(String[]::new));
            html.append("</tr>\n");
        }
        html.append("</table>\n<p>").append(escape(note)).append("</p>\n");
    }
}
