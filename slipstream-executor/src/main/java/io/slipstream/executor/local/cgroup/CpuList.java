package io.slipstream.executor.local.cgroup;

import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;

/**
 * A set of cores in the kernel's list format ({@code 0-3,8,10-11}: {@code cpuset.cpus}, {@code Cpus_allowed_list}),
 * kept in order. Pure.
 */
public record CpuList(BitSet cores) {
    /** More cores than any machine has: a list naming more is a typo, not a machine. */
    static final int MAX_CORE = 8191;

    public CpuList {
        cores = (BitSet) cores.clone();
    }

    /**
     * Parses {@code 0-3,8}: ranges low to high, separated by commas, no spaces.
     *
     * @throws IllegalArgumentException what is wrong with it, to be said with the field's name
     */
    public static CpuList parse(String text) {
        if (text == null || text.isBlank()) {
            throw new IllegalArgumentException("must list cores, e.g. 0-3,8");
        }
        BitSet cores = new BitSet();
        for (String part : text.strip().split(",", -1)) {
            String[] ends = part.split("-", -1);
            if (ends.length > 2) {
                throw new IllegalArgumentException("'" + part + "' is not a core nor a range of cores (e.g. 0-3,8)");
            }
            int low = core(ends[0], part);
            int high = ends.length == 2 ? core(ends[1], part) : low;
            if (high < low) {
                throw new IllegalArgumentException("the range " + part + " runs backwards");
            }
            cores.set(low, high + 1);
        }
        return new CpuList(cores);
    }

    private static int core(String text, String part) {
        if (!text.matches("[0-9]{1,4}")) {
            throw new IllegalArgumentException("'" + part + "' is not a core nor a range of cores (e.g. 0-3,8)");
        }
        int core = Integer.parseInt(text);
        if (core > MAX_CORE) {
            throw new IllegalArgumentException("core " + core + " is past the last a machine may have (" + MAX_CORE + ")");
        }
        return core;
    }

    @Override
    public BitSet cores() {
        return (BitSet) cores.clone();
    }

    public int count() {
        return cores.cardinality();
    }

    public boolean isEmpty() {
        return cores.isEmpty();
    }

    /** Whether every core of this list is in {@code other}. */
    public boolean within(CpuList other) {
        BitSet outside = (BitSet) cores.clone();
        outside.andNot(other.cores);
        return outside.isEmpty();
    }

    /** The cores of this list that are not in {@code other}, as a list. */
    public CpuList without(CpuList other) {
        BitSet rest = (BitSet) cores.clone();
        rest.andNot(other.cores);
        return new CpuList(rest);
    }

    /** The kernel's format, ranges merged: {@code 0-3,8}; "" when empty. */
    @Override
    public String toString() {
        List<String> parts = new ArrayList<>();
        for (int low = cores.nextSetBit(0); low >= 0; ) {
            int high = cores.nextClearBit(low) - 1;
            parts.add(low == high ? Integer.toString(low) : low + "-" + high);
            low = cores.nextSetBit(high + 1);
        }
        return String.join(",", parts);
    }
}
