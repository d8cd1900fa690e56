package io.slipstream.executor.local;

import static io.slipstream.testing.JobBuilder.aJob;
import static org.assertj.core.api.Assertions.assertThat;

import io.slipstream.api.run.InstanceId;
import io.slipstream.api.run.RunId;
import io.slipstream.api.spec.JobSpec;
import io.slipstream.api.spec.Limits;
import io.slipstream.api.spec.NodeGroupSpec;
import io.slipstream.api.spec.Resources;
import io.slipstream.executor.LaunchSpec;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class MemoryBurstsTest {
    private static final String REFUSED = "this server holds instances to their memory request (instances.burstableMemory: false)";

    static Stream<Arguments> jobs() {
        JobSpec plain = aJob("plain").memoryGi(2).spec();
        JobSpec equal = aJob("equal").memoryGi(2).memoryLimitGi(2).spec();
        JobSpec second = aJob("second").memoryGi(2).andGroup("loader").memoryGi(2).memoryLimitGi(8).spec();
        NodeGroupSpec shaped = NodeGroupSpec.of("shaped", 1, "gpu.small", null, new Limits(8L << 30), List.of("x"), null, null, null, null,
                null, null, null, null, null, null);
        JobSpec unresolved = new JobSpec(0, List.of(shaped));
        JobSpec resolved = new JobSpec(0, List.of(shaped.withResources(new Resources(1000, 4L << 30, 0, null))));
        return Stream.of(
                Arguments.of("no limits", plain, false, Map.of()),
                Arguments.of("a limit equal to the request", equal, false, Map.of()),
                Arguments.of("a limit above the request", second, false, Map.of("nodeGroups[1].limits.memory", REFUSED)),
                Arguments.of("a shape not resolved: its request is not known here", unresolved, false, Map.of()),
                Arguments.of("a shape resolved below its limit", resolved, false, Map.of("nodeGroups[0].limits.memory", REFUSED)),
                Arguments.of("bursts allowed", second, true, Map.of()));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("jobs")
    void refusesABurstOnlyWhereTheAdminDoesNotAllowIt(String description, JobSpec job, boolean allowed, Map<String, String> refused) {
        assertThat(new MemoryBursts(allowed).refusals(job)).isEqualTo(refused);
    }

    @Test
    void aLaunchIsHeldToItsRequestWhereBurstsAreNotAllowed() {
        LaunchSpec spec = new LaunchSpec(new InstanceId(new RunId("r"), 1, 0), "main-0", "node-1", List.of(), List.of("true"), Map.of(), null,
                null, null, null, new Resources(1000, 1L << 30, 0, null)).withMemoryLimit(4L << 30);
        assertThat(new MemoryBursts(true).limited(spec).memoryLimit()).isEqualTo(4L << 30);
        assertThat(new MemoryBursts(false).limited(spec).memoryLimit()).isEqualTo(1L << 30);
    }
}
