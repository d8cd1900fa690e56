package io.slipstream.executor.simulated;

import static org.assertj.core.api.Assertions.assertThat;

import io.slipstream.api.codec.Json;
import io.slipstream.executor.NoCommandsExecutorContractTest;
import io.slipstream.executor.Executor;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.io.TempDir;

/**
 * The simulated executor held to the Executor contract: it runs no commands, so the tests of what a command does are
 * skipped; the life cycle is not (one launch per instance, find, adopt after a restart, terminate with 143 after a
 * notice and 137 without a grace period, the epoch fence, forget, endpoints, unknown nodes).
 */
class SimulatedExecutorContractTest extends NoCommandsExecutorContractTest {
    @TempDir
    Path dataDir;

    @Override
    protected Executor createExecutor() {
        // Instances acknowledge a stop after 200 ms, well within the contract's grace periods (5-10 s).
        return new SimulatedExecutor(SimulatedExecutorSettings.defaults().withStopAcknowledgedAfter(Duration.ofMillis(200)), dataDir.resolve("simulated"),
                Clock.systemUTC());
    }

    @Override
    protected String nodeName() {
        return "node-1";
    }

    /** Its state on disk says it ended. */
    @Override
    protected void assertNothingRuns(Map<String, String> handle) {
        List<SimulatedInstance> found = saved().stream().filter(instance -> instance.token().equals(handle.get("simulated"))).toList();
        assertThat(found).singleElement().satisfies(instance -> assertThat(instance.ended()).as("the simulated instance ended").isTrue());
    }

    private List<SimulatedInstance> saved() {
        try (Stream<Path> files = Files.walk(dataDir.resolve("simulated/instances"))) {
            return files.filter(path -> path.toString().endsWith(".json")).map(path -> {
                try {
                    return Json.mapper().readValue(Files.readAllBytes(path), SimulatedInstance.class);
                } catch (IOException e) {
                    throw new AssertionError(e);
                }
            }).toList();
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }

    @Override
    protected String identityKey() {
        return "simulated";
    }
}
