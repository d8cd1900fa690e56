package io.slipstream.simulator.report;

import java.util.List;

/**
 * Where a policy's gangs landed in the cluster's topology, and what placing them so cost. A gang is a job of two
 * instances or more, counted at its first start. It is compact at the narrowest level at which all its instances share
 * one domain; it is in the smallest domain that could hold it when that level is at least as narrow as the narrowest
 * level one of whose domains could hold it empty (racks of 4 nodes: a 2- or 4-node gang in one rack, an 8-node one in
 * one block).
 *
 * @param levels               the topology's levels, broadest first
 * @param gangs                gangs that started
 * @param constrained          jobs that started placed by topology (the policy's rule, or the trace's column)
 * @param landed               per level, the gangs compact at it (narrowest level only); last, those in no one domain
 * @param fitting              gangs one domain of some level could hold (the rest are larger than any domain)
 * @param inSmallestDomain     of those, the gangs in the smallest domain that could hold them
 * @param constrainedFitting   the same two figures, of the constrained gangs only
 * @param gangQueueDelay       time queued over all attempts, of the gangs that completed (seconds)
 * @param topologyWait         per job that waited for the topology on its quota's guarantee (the scheduler said
 *                             {@code WaitingForTopology}: no domain had room for a Required group although the free
 *                             nodes did), the time it spent so (seconds)
 * @param borrowerTopologyWait the same of borrowers (told {@code WaitingForIdleCapacity} with the topology's message):
 *                             approximate, as what the core tells a borrower depends on the other borrowers it is shown
 * @param requiredOutsideDomain admissions of a Required group not in one domain of its level: the scheduler's promise,
 *                             checked (always 0)
 * @param startedRelaxed       gangs whose first start came after their Required placement was relaxed to Preferred
 *                             (the rule's {@code waitAtMost})
 */
public record TopologyResult(
        List<String> levels,
        int gangs,
        int constrained,
        List<Integer> landed,
        int fitting,
        int inSmallestDomain,
        int constrainedFitting,
        int constrainedInSmallestDomain,
        Distribution gangQueueDelay,
        Distribution topologyWait,
        Distribution borrowerTopologyWait,
        int requiredOutsideDomain,
        int startedRelaxed) {
    public TopologyResult {
        levels = List.copyOf(levels);
        landed = List.copyOf(landed);
    }

    /** Gangs in the smallest domain that could hold them, of those some domain could ({@code NaN}: none). */
    public double inSmallestDomainFraction() {
        return fitting == 0 ? Double.NaN : (double) inSmallestDomain / fitting;
    }

    public double constrainedInSmallestDomainFraction() {
        return constrainedFitting == 0 ? Double.NaN : (double) constrainedInSmallestDomain / constrainedFitting;
    }
}
