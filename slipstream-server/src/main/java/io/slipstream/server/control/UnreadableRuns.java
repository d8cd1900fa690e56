package io.slipstream.server.control;

import io.slipstream.api.run.RunId;
import io.slipstream.model.InstanceRecord;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * What the loop does about runs whose stored record cannot be read (the store leaves them out of the active runs): it
 * leaves them alone, and places nothing new on a node where one of their instances still lives, since what such an
 * instance holds is written in the spec that cannot be read. Pure.
 */
final class UnreadableRuns {
    private UnreadableRuns() {
    }

    /** Nodes with a live instance of an active run that is not among {@code readable}. */
    static Set<String> heldNodes(Map<RunId, List<InstanceRecord>> instancesOfActiveRuns, Set<RunId> readable) {
        Set<String> nodes = new TreeSet<>();
        instancesOfActiveRuns.forEach((run, instances) -> {
            if (!readable.contains(run)) {
                instances.stream().filter(i -> !i.state().isFinal()).forEach(i -> nodes.add(i.node()));
            }
        });
        return nodes;
    }
}
