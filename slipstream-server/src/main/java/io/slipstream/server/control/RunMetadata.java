package io.slipstream.server.control;

import io.slipstream.api.run.ClusterMetadata;
import io.slipstream.api.run.Endpoint;
import io.slipstream.api.run.InstanceId;
import io.slipstream.api.run.InstanceState;
import io.slipstream.api.spec.StorageSpec;
import io.slipstream.model.InstanceRecord;
import io.slipstream.model.RunRecord;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The metadata every instance of a run's attempt gets: all its instances (an elastic run's: its world's, ranked as
 * {@link WorldRanks} says), where to reach them, and its storage.
 */
final class RunMetadata {
    private RunMetadata() {
    }

    /**
     * @param instances the attempt's instances
     * @param starting  instances being launched now: marked started like those already running
     */
    static ClusterMetadata of(RunRecord run, List<InstanceRecord> instances, Set<InstanceId> starting) {
        return of(run, instances, starting, Map.of());
    }

    /** @param places where each node is in the cluster's topology (level to domain), for the instances on it */
    static ClusterMetadata of(RunRecord run, List<InstanceRecord> instances, Set<InstanceId> starting, Map<String, Map<String, String>> places) {
        List<ClusterMetadata.Instance> entries = new ArrayList<>();
        ClusterMetadata.Address master = null;
        for (InstanceRecord instance : WorldRanks.listed(run, instances).stream().sorted(Comparator.comparingInt(i -> i.id().rank())).toList()) {
            Endpoint endpoint = instance.endpoint() == null ? new Endpoint("localhost", "localhost", "127.0.0.1", List.of()) : instance.endpoint();
            boolean started = instance.state() != InstanceState.PENDING || starting.contains(instance.id());
            int rank = WorldRanks.rank(run, instance);
            entries.add(new ClusterMetadata.Instance(instance.displayName(), instance.nodeGroup(), rank, WorldRanks.groupRank(run, instance),
                    instance.node(), endpoint.hostname(), endpoint.fqdn(), endpoint.ip(), endpoint.ports(), started,
                    instance.node() == null ? Map.of() : places.getOrDefault(instance.node(), Map.of())));
            if (rank == 0) {
                // Where the IP is known only once the instance runs (Kubernetes), its stable DNS name is the address.
                String addr = endpoint.ip() == null || endpoint.ip().isBlank() ? endpoint.fqdn() : endpoint.ip();
                master = new ClusterMetadata.Address(addr, endpoint.ports().isEmpty() ? 0 : endpoint.ports().get(0));
            }
        }
        List<ClusterMetadata.Storage> storage = new ArrayList<>();
        for (StorageSpec spec : run.spec().storage()) {
            storage.add(new ClusterMetadata.Storage(spec.name(), spec.scope().name(), spec.pathInScope(),
                    spec.mountPath() == null ? "/mnt/" + spec.name() : spec.mountPath()));
        }
        return new ClusterMetadata(ClusterMetadata.FORMAT_VERSION, run.id().value(), run.workspace(), run.job(), run.attempt(),
                WorldRanks.worldSize(run), run.spec().startupOrder().name(), master, entries, storage);
    }
}
