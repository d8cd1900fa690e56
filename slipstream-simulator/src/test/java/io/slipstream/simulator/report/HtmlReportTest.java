package io.slipstream.simulator.report;

import static org.assertj.core.api.Assertions.assertThat;

import io.slipstream.api.run.QuotaId;
import io.slipstream.api.spec.IdleMode;
import io.slipstream.api.spec.QuotaType;
import io.slipstream.api.spec.Resources;
import io.slipstream.api.spec.WithinQuota;
import io.slipstream.scheduler.QuotaState;
import io.slipstream.simulator.Simulator;
import io.slipstream.simulator.input.ClusterSpec;
import io.slipstream.simulator.input.Experiment;
import io.slipstream.simulator.input.NodePool;
import io.slipstream.simulator.input.Policy;
import io.slipstream.simulator.input.Trace;
import io.slipstream.simulator.input.TraceJob;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The HTML report of a 90-minute trace, read as its reader sees it: the charts' points, axes and shapes. */
class HtmlReportTest {
    private static final Pattern SVG = Pattern.compile("<svg.*?</svg>", Pattern.DOTALL);
    private static final Pattern PATH = Pattern.compile("<path d=\"([^\"]*)\"([^>]*)/>");

    private static String page;

    @BeforeAll
    static void replayNinetyMinutes() {
        // Tenant a submits a 4-GPU job of 10 minutes every 3 minutes for 90 minutes, b a 2-GPU job of 7 minutes every
        // 5 minutes: more than the node's 8 GPUs, so delays vary and the GPUs held change all along.
        List<TraceJob> jobs = new ArrayList<>();
        for (long t = 0; t <= 90 * 60_000L; t += 3 * 60_000L) {
            jobs.add(new TraceJob(jobs.size(), t, 10 * 60_000L, "a", 4, 1, 0, null));
        }
        for (long t = 0; t <= 90 * 60_000L; t += 5 * 60_000L) {
            jobs.add(new TraceJob(jobs.size(), t, 7 * 60_000L, "b", 2, 1, 0, null));
        }
        List<QuotaState> quotas = List.of(quota("shared/gpus", null, 8), quota("a/gpus", "shared/gpus", 4), quota("b/gpus", "shared/gpus", 4));
        List<Policy> policies = List.of(policy("fixed", quotas, IdleMode.Disabled), policy("borrowing", quotas, IdleMode.Acceptable));
        Experiment experiment = new Experiment("short", 1, new Trace("test", jobs),
                new ClusterSpec(List.of(new NodePool("n", 1, 8, "gpu", 96_000, 1L << 40))), policies, List.of());
        page = HtmlReport.render(experiment, Simulator.run(experiment, Set.of(), null));
    }

    @Test
    void aNinetyMinuteTraceIsDrawnInManyBucketsOnAnAxisInMinutes() {
        List<String> timelines = charts().stream().filter(svg -> svg.contains("capacity 8 GPUs")).toList();
        assertThat(timelines).hasSize(2);
        for (String svg : timelines) {
            assertThat(svg).contains(">minutes from the first submission<").contains(">90<").doesNotContain("days");
            List<String> areas = paths(svg, "stroke=\"none\"");
            assertThat(areas).hasSize(2); // one per tenant
            for (String d : areas) {
                // Each bucket is a flat step: 90 minutes in 30-second buckets.
                assertThat(count(d, 'H')).isGreaterThanOrEqualTo(50).isEqualTo(180);
            }
        }
    }

    @Test
    void theDelayCdfIsMadeOfStepsOnly() {
        String delays = charts().get(0);
        assertThat(delays).contains("share of runs");
        List<String> lines = paths(delays, "fill=\"none\"");
        assertThat(lines).hasSize(2); // one per policy
        for (String d : lines) {
            // Move to the bottom left, then only horizontal and vertical segments, rightwards and upwards.
            assertThat(d).matches("M[0-9.]+,[0-9.]+([HV][0-9.]+)+");
            double lastX = 0;
            double lastY = Double.MAX_VALUE;
            Matcher segment = Pattern.compile("([HV])([0-9.]+)").matcher(d);
            int vertical = 0;
            while (segment.find()) {
                double v = Double.parseDouble(segment.group(2));
                if (segment.group(1).equals("H")) {
                    assertThat(v).isGreaterThanOrEqualTo(lastX);
                    lastX = v;
                } else {
                    assertThat(v).isLessThanOrEqualTo(lastY);
                    lastY = v;
                    vertical++;
                }
            }
            assertThat(vertical).as("a step per distinct delay, not one slope").isGreaterThan(2);
            assertThat(lastY).as("ends at 100%").isEqualTo(20.0);
        }
    }

    private static List<String> charts() {
        List<String> charts = new ArrayList<>();
        Matcher m = SVG.matcher(page);
        while (m.find()) {
            charts.add(m.group());
        }
        return charts;
    }

    private static List<String> paths(String svg, String attribute) {
        List<String> paths = new ArrayList<>();
        Matcher m = PATH.matcher(svg);
        while (m.find()) {
            if (m.group(2).contains(attribute)) {
                paths.add(m.group(1));
            }
        }
        return paths;
    }

    private static long count(String text, char c) {
        return text.chars().filter(ch -> ch == c).count();
    }

    private static Policy policy(String name, List<QuotaState> quotas, IdleMode mode) {
        return new Policy(name, quotas, "test", mode, Duration.ofSeconds(30), Duration.ofSeconds(60), Duration.ofSeconds(10), false, Duration.ZERO,
                Duration.ofSeconds(10), null);
    }

    private static QuotaState quota(String id, String parent, int gpus) {
        return new QuotaState(QuotaId.parse(id), QuotaType.General, null, parent == null ? null : QuotaId.parse(parent), new Resources(0, 0, gpus, null), null,
                WithinQuota.Never);
    }
}
