package io.slipstream.simulator.report;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** The topology figures of each policy, for the table, the JSON and the HTML reports alike. */
final class TopologyReport {
    static final String NOTE = "Gangs: jobs of 2+ instances, where they were at their first start; compact at the narrowest level whose one domain "
            + "holds them all. In the smallest domain: at a level as narrow as the narrowest whose domains could hold the gang empty. "
            + "Waited for topology: jobs the scheduler said no domain had room for although the free nodes did (Required), on their guarantee "
            + "(WaitingForTopology) / borrowing, and for how long in all.";

    private TopologyReport() {
    }

    /** Whether any policy ran on a cluster with a topology. */
    static boolean any(List<PolicyResult> results) {
        return results.stream().anyMatch(r -> r.topology() != null);
    }

    /** A header row, then one row per policy with a topology. */
    static List<List<String>> rows(List<PolicyResult> results) {
        List<List<String>> rows = new ArrayList<>();
        rows.add(List.of("policy", "placement", "gangs", "placed by topology", "compact at", "in smallest domain", "utilization (busy window)",
                "gang mean delay*", "gang p50*", "gang p99*", "all mean delay*", "all p50*", "all p99*", "waited for topology", "topology wait"));
        for (PolicyResult r : results) {
            TopologyResult t = r.topology();
            if (t == null) {
                continue;
            }
            rows.add(List.of(r.policy().name(), r.policy().placement() == null ? "-" : r.policy().placement().describe(), count(t.gangs()),
                    count(t.constrained()) + (t.startedRelaxed() == 0 ? "" : " (" + count(t.startedRelaxed()) + " relaxed)"), landed(t),
                    share(t.inSmallestDomain(), t.fitting()), Format.percent(r.windowUtilization()), Format.duration(t.gangQueueDelay().mean()),
                    Format.duration(t.gangQueueDelay().percentile(50)), Format.duration(t.gangQueueDelay().percentile(99)),
                    Format.duration(r.queueDelay().mean()), Format.duration(r.queueDelay().percentile(50)), Format.duration(r.queueDelay().percentile(99)),
                    count(t.topologyWait().count()) + " / " + count(t.borrowerTopologyWait().count()),
                    Format.duration(total(t.topologyWait())) + " / " + Format.duration(total(t.borrowerTopologyWait()))));
        }
        return rows;
    }

    /** {@code rack 700, block 90, none 16}. */
    static String landed(TopologyResult t) {
        List<String> parts = new ArrayList<>();
        for (int level = t.levels().size() - 1; level >= 0; level--) {
            parts.add(t.levels().get(level) + " " + count(t.landed().get(level)));
        }
        parts.add("none " + count(t.landed().get(t.levels().size())));
        return String.join(", ", parts);
    }

    private static double total(Distribution d) {
        return d.mean() * d.count();
    }

    private static String share(int part, int whole) {
        return whole == 0 ? "-" : String.format(Locale.ROOT, "%,d (%s)", part, Format.percent((double) part / whole));
    }

    private static String count(int n) {
        return String.format(Locale.ROOT, "%,d", n);
    }

    /** The JSON object of a policy's topology figures. */
    static Map<String, Object> json(TopologyResult t) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("levels", t.levels());
        m.put("gangs", t.gangs());
        m.put("constrained", t.constrained());
        m.put("startedRelaxed", t.startedRelaxed());
        Map<String, Object> landed = new LinkedHashMap<>();
        for (int level = t.levels().size() - 1; level >= 0; level--) {
            landed.put(t.levels().get(level), t.landed().get(level));
        }
        landed.put("none", t.landed().get(t.levels().size()));
        m.put("compactAt", landed);
        m.put("gangsSomeDomainCouldHold", t.fitting());
        m.put("inSmallestDomain", t.inSmallestDomain());
        m.put("inSmallestDomainFraction", fraction(t.inSmallestDomainFraction()));
        m.put("constrainedInSmallestDomain", t.constrainedInSmallestDomain());
        m.put("constrainedInSmallestDomainFraction", fraction(t.constrainedInSmallestDomainFraction()));
        m.put("gangMeanQueueDelaySeconds", Format.round(t.gangQueueDelay().mean(), 1));
        m.put("gangP50QueueDelaySeconds", Format.round(t.gangQueueDelay().percentile(50), 1));
        m.put("gangP99QueueDelaySeconds", Format.round(t.gangQueueDelay().percentile(99), 1));
        m.put("waitedForTopology", t.topologyWait().count());
        m.put("topologyWaitHours", Format.round(total(t.topologyWait()) / 3600, 2));
        m.put("meanTopologyWaitSeconds", Format.round(t.topologyWait().mean(), 1));
        m.put("p99TopologyWaitSeconds", Format.round(t.topologyWait().percentile(99), 1));
        m.put("borrowersWaitedForTopology", t.borrowerTopologyWait().count());
        m.put("borrowerTopologyWaitHours", Format.round(total(t.borrowerTopologyWait()) / 3600, 2));
        m.put("meanBorrowerTopologyWaitSeconds", Format.round(t.borrowerTopologyWait().mean(), 1));
        m.put("p99BorrowerTopologyWaitSeconds", Format.round(t.borrowerTopologyWait().percentile(99), 1));
        m.put("requiredOutsideDomain", t.requiredOutsideDomain());
        return m;
    }

    private static Double fraction(double value) {
        return Double.isNaN(value) ? null : Format.round(value, 4);
    }
}
