package io.slipstream.model.lifecycle;

import static java.util.Objects.requireNonNull;

import io.slipstream.api.run.InstanceId;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Everything a decision about one run may depend on besides its records: the control loop gathers it (reading the
 * clock, the store's down nodes, the executor), the decision only reads it.
 *
 * @param now         the time of the decision
 * @param downNodes   nodes an administrator declared down, with why
 * @param drainingNodes nodes an administrator drains, with why: what runs there is moved off with the usual notice
 * @param unconfirmed instances adopted after a restart that the executor has not reported on yet: until it has,
 *                    their run's runtime is unknown, so it is not timed out
 * @param activities  what the run's instances last showed, or {@code null} when not looked at this time
 *                    ({@link RunLifecycle#wants} says when it must be)
 * @param logLines    the last lines of instances' output, for the instance {@link RunLifecycle#wants} names
 */
public record Observation(Instant now, Map<String, String> downNodes, Map<String, String> drainingNodes, Set<InstanceId> unconfirmed,
                          Map<InstanceId, InstanceActivity> activities, Map<InstanceId, List<String>> logLines) {
    public Observation {
        requireNonNull(now, "now is null");
        downNodes = Map.copyOf(downNodes);
        drainingNodes = Map.copyOf(drainingNodes);
        unconfirmed = Set.copyOf(unconfirmed);
        activities = activities == null ? null : Map.copyOf(activities);
        logLines = Map.copyOf(logLines);
    }

    /** Only the time: no node down or draining, nothing looked at. */
    public static Observation at(Instant now) {
        return new Observation(now, Map.of(), Map.of(), Set.of(), null, Map.of());
    }

    public Observation withActivities(Map<InstanceId, InstanceActivity> seen) {
        return new Observation(now, downNodes, drainingNodes, unconfirmed, seen, logLines);
    }

    public Observation withLogLines(InstanceId id, List<String> lines) {
        return new Observation(now, downNodes, drainingNodes, unconfirmed, activities, Map.of(id, List.copyOf(lines)));
    }

    public Observation withDownNode(String node, String why) {
        Map<String, String> down = new java.util.HashMap<>(downNodes);
        down.put(node, why);
        return new Observation(now, down, drainingNodes, unconfirmed, activities, logLines);
    }

    public Observation withDrainingNode(String node, String why) {
        Map<String, String> draining = new java.util.HashMap<>(drainingNodes);
        draining.put(node, why);
        return new Observation(now, downNodes, draining, unconfirmed, activities, logLines);
    }

    public Observation withUnconfirmed(Set<InstanceId> adopted) {
        return new Observation(now, downNodes, drainingNodes, adopted, activities, logLines);
    }
}
