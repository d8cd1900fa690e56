package io.slipstream.model;

import static java.util.Objects.requireNonNull;

import io.slipstream.api.run.RealTimeResources;
import io.slipstream.api.run.RunId;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * The world of an elastic run's attempt (docs/elastic.md): which of its slots run in it. A slot's rank (an instance's
 * {@code InstanceId.rank}) is its identity and never renumbered; the ranks a workload sees are dense, 0..n-1 in slot
 * order ({@link #denseRank}).
 *
 * @param version  1 for the attempt's first world, one more at each change of size ({@code SLIPSTREAM_WORLD_VERSION})
 * @param members  the slots of the world (while {@code changing}, of the world to come), ascending
 * @param borrowed the members on idle capacity ({@code NotInQuota}) while the run stands {@code InQuota}: empty when the
 *                 whole run is on idle capacity (every instance then is)
 * @param leaving  slots a shrink removes, until their instances are gone: they hold their nodes for the run named
 * @param changing whether the world is changing: the instances of the world before are being stopped (their notice says
 *                 {@code WorldChange:} or {@code Shrunk:}) and nothing is launched until every one is gone
 */
public record ElasticWorld(int version, List<Integer> members, Set<Integer> borrowed, List<Leaving> leaving, boolean changing) {
    /** The prefix of the notice a surviving instance gets: save, exit, start again in the new world. */
    public static final String WORLD_CHANGE = "WorldChange";
    /** The prefix of the notice an instance a shrink removes gets. */
    public static final String SHRUNK = "Shrunk";

    /** A slot being removed: its capacity goes to {@code forRun} ({@code null}: none), it stood {@code standing} until gone. */
    public record Leaving(int rank, RunId forRun, RealTimeResources standing, String reason) {
        public Leaving {
            requireNonNull(standing, "standing is null");
            requireNonNull(reason, "reason is null");
        }
    }

    public ElasticWorld {
        if (version < 1) {
            throw new IllegalArgumentException("world version must be at least 1: " + version);
        }
        members = List.copyOf(new TreeSet<>(members));
        borrowed = borrowed == null ? Set.of() : java.util.Collections.unmodifiableSet(new TreeSet<>(borrowed));
        leaving = leaving == null ? List.of() : List.copyOf(leaving);
        if (members.isEmpty()) {
            throw new IllegalArgumentException("a world has at least one member");
        }
        if (!members.containsAll(borrowed)) {
            throw new IllegalArgumentException("borrowed slots " + borrowed + " are not all members of " + members);
        }
        for (Leaving slot : leaving) {
            if (members.contains(slot.rank())) {
                throw new IllegalArgumentException("slot " + slot.rank() + " is both a member and leaving");
            }
        }
    }

    /** The first world of an attempt: the slots admitted, nothing changing. */
    public static ElasticWorld admitted(Collection<Integer> slots, Set<Integer> borrowed) {
        return new ElasticWorld(1, List.copyOf(slots), borrowed, List.of(), false);
    }

    /** The world grown by {@code slots} ({@code borrowed}: those of them on idle capacity of an InQuota run). */
    public ElasticWorld grown(Collection<Integer> slots, Set<Integer> borrowedSlots) {
        List<Integer> next = new ArrayList<>(members);
        next.addAll(slots);
        Set<Integer> nextBorrowed = new TreeSet<>(borrowed);
        nextBorrowed.addAll(borrowedSlots);
        return new ElasticWorld(version + 1, next, nextBorrowed, leaving, true);
    }

    /** The world without {@code gone}, each going as it says. */
    public ElasticWorld shrunk(List<Leaving> gone) {
        List<Integer> next = new ArrayList<>(members);
        Set<Integer> nextBorrowed = new TreeSet<>(borrowed);
        List<Leaving> nextLeaving = new ArrayList<>(leaving);
        for (Leaving slot : gone) {
            next.remove(Integer.valueOf(slot.rank()));
            nextBorrowed.remove(slot.rank());
            nextLeaving.add(slot);
        }
        return new ElasticWorld(version + 1, next, nextBorrowed, nextLeaving, true);
    }

    /** Every instance of the world before is gone: the new world starts, nothing is leaving any more. */
    public ElasticWorld changed() {
        return new ElasticWorld(version, members, borrowed, List.of(), false);
    }

    /** The run, guaranteed, now has {@code slot} on its guarantee. */
    public ElasticWorld promoted(Set<Integer> slots) {
        Set<Integer> next = new TreeSet<>(borrowed);
        next.removeAll(slots);
        return new ElasticWorld(version, members, next, leaving, changing);
    }

    /** Every member on the guarantee (the whole run was promoted). */
    public ElasticWorld allGuaranteed() {
        return new ElasticWorld(version, members, Set.of(), leaving, changing);
    }

    /** The node group of a slot: a run's slots are its groups' replicas, group after group. */
    public static io.slipstream.api.spec.NodeGroupSpec groupOf(io.slipstream.api.spec.JobSpec spec, int slot) {
        int first = 0;
        for (io.slipstream.api.spec.NodeGroupSpec group : spec.nodeGroups()) {
            if (slot < first + group.replicas()) {
                return group;
            }
            first += group.replicas();
        }
        throw new IllegalArgumentException("slot " + slot + " is beyond the run's " + first + " instances");
    }

    public boolean isMember(int rank) {
        return members.contains(rank);
    }

    /** The leaving slot of {@code rank}, or {@code null}. */
    public Leaving leavingOf(int rank) {
        for (Leaving slot : leaving) {
            if (slot.rank() == rank) {
                return slot;
            }
        }
        return null;
    }

    /** The rank a member sees: its place among the members, 0..n-1. */
    public int denseRank(int slot) {
        int rank = members.indexOf(slot);
        if (rank < 0) {
            throw new IllegalArgumentException("slot " + slot + " is not a member of world " + version + " " + members);
        }
        return rank;
    }

    /** How many members stand on the guarantee and how many on idle capacity, the run standing {@code where}. */
    public int notInQuota(RealTimeResources where) {
        return where == RealTimeResources.NotInQuota ? members.size() : borrowed.size();
    }
}
