package io.slipstream.api.run;

import java.util.ArrayList;
import java.util.List;

/**
 * An MPI hostfile of a run's attempt, made from its metadata, for launchers that read one ({@code mpirun
 * --hostfile}, Horovod, DeepSpeed). Hosts are listed in rank order; consecutive ranks on one host share a line, so that
 * a launcher filling slots in file order gives every process the rank Slipstream gave its instance. A host is its IP
 * where known, else its DNS name.
 */
public final class Hostfile {
    /** The two syntaxes in use: Open MPI's {@code host slots=N} and MPICH's (Hydra's) {@code host:N}. */
    public enum Syntax {
        OPEN_MPI,
        MPICH
    }

    private Hostfile() {
    }

    public static String of(ClusterMetadata metadata, Syntax syntax) {
        StringBuilder text = new StringBuilder();
        for (Slots line : slots(metadata)) {
            text.append(line.host()).append(syntax == Syntax.OPEN_MPI ? " slots=" : ":").append(line.count()).append('\n');
        }
        return text.toString();
    }

    private record Slots(String host, int count) {
    }

    private static List<Slots> slots(ClusterMetadata metadata) {
        List<Slots> lines = new ArrayList<>();
        for (ClusterMetadata.Instance instance : metadata.instances().stream()
                .sorted(java.util.Comparator.comparingInt(ClusterMetadata.Instance::rank)).toList()) {
            String host = instance.ip() == null || instance.ip().isBlank() ? instance.fqdn() : instance.ip();
            int last = lines.size() - 1;
            if (last >= 0 && lines.get(last).host().equals(host)) {
                lines.set(last, new Slots(host, lines.get(last).count() + 1));
            } else {
                lines.add(new Slots(host, 1));
            }
        }
        return lines;
    }
}
