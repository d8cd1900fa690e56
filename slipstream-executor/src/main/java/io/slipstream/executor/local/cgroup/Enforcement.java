package io.slipstream.executor.local.cgroup;

import java.util.EnumSet;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * What this server enforces on its instances, said once at start (its start line, {@code /readyz}, {@code get nodes}) and
 * with every instance's start.
 *
 * @param version  {@code v1} or {@code v2}, or {@code null} without cgroups
 * @param enforced the limits the kernel holds instances to
 * @param why      why the others are not enforced, or {@code null} when all are
 */
public record Enforcement(String version, Set<Limit> enforced, String why) {
    public Enforcement {
        // In the enum's order, which describe() keeps.
        enforced = java.util.Collections.unmodifiableSet(enforced.isEmpty() ? EnumSet.noneOf(Limit.class) : EnumSet.copyOf(enforced));
    }

    /** Nothing enforced, for {@code why}. */
    public static Enforcement none(String why) {
        return new Enforcement(null, Set.of(), why);
    }

    public boolean enforces(Limit limit) {
        return enforced.contains(limit);
    }

    /** The limits not enforced, in their order. */
    public Set<Limit> notEnforced() {
        EnumSet<Limit> missing = EnumSet.allOf(Limit.class);
        missing.removeAll(enforced);
        return missing;
    }

    /** One line: {@code cgroup v1: memory, cpu, pids, kill enforced; not devices: why}. */
    public String describe() {
        String on = enforced.stream().map(Limit::name).collect(Collectors.joining(", "));
        String off = notEnforced().stream().map(Limit::name).collect(Collectors.joining(", "));
        if (version == null) {
            return "resource limits not enforced (" + off + "): " + why;
        }
        return "cgroup " + version + ": " + (on.isEmpty() ? "nothing" : on) + " enforced" + (off.isEmpty() ? "" : "; not " + off + (why == null ? "" : ": " + why));
    }
}
