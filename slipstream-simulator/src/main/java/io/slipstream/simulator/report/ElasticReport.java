package io.slipstream.simulator.report;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** The elastic part of the reports (docs/elastic.md): the figures that compare elastic borrowers with rigid ones. */
final class ElasticReport {
    static final String NOTE = "Elastic: jobs a policy made elastic; whole stops (preemptions) against shrinks, which took an elastic job's extra "
            + "instances instead of stopping a run whole; grows, changes of size that added instances; borrowers' lost GPU-h, the work lost by runs "
            + "stopped while on idle capacity.";

    private ElasticReport() {
    }

    /** Whether some policy made jobs elastic: then the table is printed, with every policy in it to compare. */
    static boolean any(List<PolicyResult> results) {
        return results.stream().anyMatch(r -> r.elastic().elasticJobs() > 0);
    }

    /** A header and one row per policy. */
    static List<List<String>> rows(List<PolicyResult> results) {
        List<List<String>> rows = new ArrayList<>();
        rows.add(List.of("policy", "elastic jobs", "mean JCT*", "p99 guarantee wait", "borrowers' lost GPU-h", "whole stops", "shrinks (instances)",
                "grows (instances)"));
        for (PolicyResult r : results) {
            ElasticFigures e = r.elastic();
            rows.add(List.of(r.policy().name(), String.format(Locale.ROOT, "%,d", e.elasticJobs()), Format.duration(r.completionTime().mean()),
                    Format.duration(r.guaranteeWait().percentile(99)), Format.number(e.borrowerLostGpuHours()), String.format(Locale.ROOT, "%,d", r.preemptions()),
                    String.format(Locale.ROOT, "%,d (%,d)", e.shrinks(), e.instancesShrunk()), String.format(Locale.ROOT, "%,d (%,d)", e.grows(), e.instancesGrown())));
        }
        return rows;
    }

    static Map<String, Object> json(ElasticFigures e) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("elasticJobs", e.elasticJobs());
        m.put("grows", e.grows());
        m.put("instancesGrown", e.instancesGrown());
        m.put("shrinks", e.shrinks());
        m.put("instancesShrunk", e.instancesShrunk());
        return m;
    }
}
