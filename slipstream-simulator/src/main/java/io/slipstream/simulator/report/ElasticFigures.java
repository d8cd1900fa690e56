package io.slipstream.simulator.report;

/**
 * What a policy did with elastic jobs (docs/elastic.md), and the figure its comparison with rigid borrowing needs.
 * {@code elasticJobs}: jobs the policy made elastic; {@code grows}, {@code instancesGrown}: changes of size that added
 * instances to a running job, and how many; {@code shrinks}, {@code instancesShrunk}: reclaims that took a job's extras
 * instead of stopping it whole, and how many instances they took; {@code borrowerLostGpuHours}: work lost by runs
 * stopped while on idle capacity (every policy: the rigid ones' borrowers too).
 */
public record ElasticFigures(int elasticJobs, int grows, int instancesGrown, int shrinks, int instancesShrunk, double borrowerLostGpuHours) {
    /** No elastic job, nothing lost. */
    public static final ElasticFigures NONE = new ElasticFigures(0, 0, 0, 0, 0, 0);
}
