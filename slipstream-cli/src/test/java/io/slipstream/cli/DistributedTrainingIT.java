package io.slipstream.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.slipstream.api.codec.Json;
import io.slipstream.api.run.ClusterMetadata;
import io.slipstream.cli.SlipstreamProcess.Result;
import io.slipstream.cli.SlipstreamProcess.Server;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import io.slipstream.testing.NoProcessLeftBehind;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;

/**
 * The shipped distributed-training example through the real server, CLI and processes: four ranks find each other
 * through the metadata file, train over a ring all-reduce and agree on the final weights; InOrder waits for the
 * coordinator's probe, InParallel does not; overrides change the world size. (A storage path that would leave the
 * workspace is refused: {@code CliCommandsTest}.)
 */
@ExtendWith(NoProcessLeftBehind.class)
class DistributedTrainingIT {
    private static final Path JOB = Path.of(System.getProperty("slipstream.repo", "..")).resolve("examples/distributed-training/job.yaml");
    private static final Pattern SHA = Pattern.compile("\\[(\\S+)\\|r(\\d+)\\|[^]]*] final weights sha256=([0-9a-f]{64})");
    private static final Pattern LOSS = Pattern.compile("loss first ([0-9.]+) last ([0-9.]+)");

    @TempDir
    static Path work;

    private static Server server;

    @BeforeAll
    static void startServer() throws Exception {
        server = SlipstreamProcess.startServer(work.resolve("data"));
        Files.copy(JOB, work.resolve("job.yaml"));
    }

    @AfterAll
    static void stopServer() throws Exception {
        server.close();
    }

    private static Result cli(String... args) throws Exception {
        List<String> all = new ArrayList<>(List.of(args));
        all.addAll(List.of("--server", server.url(), "--data-dir", server.dataDir().toString()));
        return SlipstreamProcess.cli(work, all.toArray(String[]::new));
    }

    private static JsonNode run(String id) throws Exception {
        return Json.mapper().readTree(cli("get", "run", id, "-o", "json").out());
    }

    private static String train(int steps, String... overrides) throws Exception {
        List<String> args = new ArrayList<>(List.of("submit", "-f", "job.yaml", "--wait",
                "--set", "nodeGroups.coordinator.env.STEPS=" + steps, "--set", "nodeGroups.worker.env.STEPS=" + steps,
                "--set", "nodeGroups.coordinator.env.CHECKPOINT_EVERY=100", "--set", "nodeGroups.worker.env.CHECKPOINT_EVERY=100"));
        for (String override : overrides) {
            args.addAll(List.of("--set", override));
        }
        Result result = cli(args.toArray(String[]::new));
        assertThat(result.exit()).as(result.err()).isZero();
        return result.lastLine();
    }

    @Test
    void fourRanksTrainOverARingAndAgreeOnTheWeights() throws Exception {
        String id = train(300);
        JsonNode run = run(id);
        assertThat(run.get("state").asString()).isEqualTo("SUCCEEDED");

        String logs = cli("logs", id).out();
        Matcher sha = SHA.matcher(logs);
        Set<Integer> ranks = new HashSet<>();
        Set<String> digests = new HashSet<>();
        while (sha.find()) {
            ranks.add(Integer.parseInt(sha.group(2)));
            digests.add(sha.group(3));
        }
        assertThat(ranks).containsExactlyInAnyOrder(0, 1, 2, 3);
        assertThat(digests).as("every rank ends with the same weights").hasSize(1);
        Matcher loss = LOSS.matcher(logs);
        assertThat(loss.find()).as(logs).isTrue();
        assertThat(Double.parseDouble(loss.group(2))).as("loss decreases").isLessThan(Double.parseDouble(loss.group(1)) / 2);
        assertThat(logs).contains("all-reduce benchmark");

        // Every instance's metadata lists all four, with distinct ranks and ports, and the job's output storage.
        Set<Integer> ports = new HashSet<>();
        for (int rank = 0; rank < 4; rank++) {
            Path file = server.dataDir().resolve("instances").resolve(id).resolve("1").resolve(Integer.toString(rank)).resolve("metadata.json");
            ClusterMetadata metadata = Json.mapper().readValue(Files.readString(file), ClusterMetadata.class);
            assertThat(metadata.version()).isEqualTo(ClusterMetadata.FORMAT_VERSION);
            assertThat(metadata.instances()).extracting(ClusterMetadata.Instance::rank).containsExactly(0, 1, 2, 3);
            assertThat(metadata.instances()).extracting(ClusterMetadata.Instance::nodeGroup).containsExactly("coordinator", "worker", "worker", "worker");
            metadata.instances().forEach(i -> ports.add(i.ports().get(0)));
            assertThat(metadata.storage()).singleElement().satisfies(s -> assertThat(Path.of(s.path()).resolve("weights-" + id + ".bin")).exists());
        }
        assertThat(ports).hasSize(4);

        // InOrder: no worker started before the coordinator was ready.
        JsonNode instances = run.get("instances");
        Instant coordinatorReady = Instant.parse(instances.get(0).get("readyAt").asString());
        for (int rank = 1; rank < 4; rank++) {
            assertThat(Instant.parse(instances.get(rank).get("startedAt").asString())).isAfterOrEqualTo(coordinatorReady);
        }

        // Bit-identical weights for the same seed on every run: MlpTest and RingAllReduceTest (the example's own tests); a
        // resumed run ending with the uninterrupted run's weights: the demo (EndToEndIT) and PyTorchDdpIT.
    }

    @Test
    void inParallelDoesNotWaitAndOverridesChangeTheWorldSize() throws Exception {
        String id = train(100, "startupOrder=InParallel", "nodeGroups.worker.replicas=2");
        JsonNode run = run(id);
        assertThat(run.get("overrides").get("nodeGroups.worker.replicas").asString()).isEqualTo("2");
        assertThat(run.get("spec").get("spec").get("nodeGroups").get(1).get("replicas").asInt()).isEqualTo(2);
        JsonNode instances = run.get("instances");
        assertThat(instances).hasSize(3);
        Instant coordinatorReady = Instant.parse(instances.get(0).get("readyAt").asString());
        assertThat(Instant.parse(instances.get(1).get("startedAt").asString())).as("workers start with the coordinator").isBefore(coordinatorReady);
        Matcher sha = SHA.matcher(cli("logs", id).out());
        Set<String> digests = new HashSet<>();
        int count = 0;
        while (sha.find()) {
            digests.add(sha.group(3));
            count++;
        }
        assertThat(count).isEqualTo(3);
        assertThat(digests).hasSize(1);
    }
}
