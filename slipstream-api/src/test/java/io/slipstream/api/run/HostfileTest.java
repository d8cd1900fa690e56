package io.slipstream.api.run;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class HostfileTest {
    /** Instances as (rank, ip, fqdn), listed out of rank order on purpose. */
    static Stream<Arguments> cases() {
        return Stream.of(
                Arguments.of("one machine, four ranks", List.of(i(0, "127.0.0.1", "a"), i(2, "127.0.0.1", "c"), i(1, "127.0.0.1", "b"),
                        i(3, "127.0.0.1", "d")), "127.0.0.1 slots=4\n", "127.0.0.1:4\n"),
                Arguments.of("a host per rank, DNS names where the IP is unknown",
                        List.of(i(1, null, "w-1.run.ns.svc"), i(0, "", "w-0.run.ns.svc")),
                        "w-0.run.ns.svc slots=1\nw-1.run.ns.svc slots=1\n", "w-0.run.ns.svc:1\nw-1.run.ns.svc:1\n"),
                Arguments.of("a host that comes back later keeps rank order", List.of(i(0, "10.0.0.1", "a"), i(1, "10.0.0.2", "b"),
                        i(2, "10.0.0.1", "c")), "10.0.0.1 slots=1\n10.0.0.2 slots=1\n10.0.0.1 slots=1\n", "10.0.0.1:1\n10.0.0.2:1\n10.0.0.1:1\n"),
                Arguments.of("no instances", List.of(), "", ""));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void listsHostsInRankOrder(String name, List<ClusterMetadata.Instance> instances, String openMpi, String mpich) {
        ClusterMetadata metadata = new ClusterMetadata(1, "r-1", "ws", "job", 1, instances.size(), "InParallel",
                new ClusterMetadata.Address("127.0.0.1", 0), instances, List.of());
        assertThat(Hostfile.of(metadata, Hostfile.Syntax.OPEN_MPI)).isEqualTo(openMpi);
        assertThat(Hostfile.of(metadata, Hostfile.Syntax.MPICH)).isEqualTo(mpich);
    }

    private static ClusterMetadata.Instance i(int rank, String ip, String fqdn) {
        return new ClusterMetadata.Instance("w-" + rank, "w", rank, rank, "node-" + rank, fqdn, fqdn, ip, List.of(), true);
    }
}
