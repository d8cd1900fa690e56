package io.slipstream.sdk;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.slipstream.api.codec.Json;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The SDK reads the metadata file the control plane writes ({@code io.slipstream.api.run.ClusterMetadata}) as it is. */
class ClusterMetadataTest {
    private static io.slipstream.api.run.ClusterMetadata written() {
        var api = io.slipstream.api.run.ClusterMetadata.class;
        var coordinator = new io.slipstream.api.run.ClusterMetadata.Instance("train-x-0", "coordinator", 0, 0, "node-1", "node-1",
                "node-1.local", "10.0.0.1", List.of(29500, 29501), true, Map.of("rack", "r2"));
        var worker = new io.slipstream.api.run.ClusterMetadata.Instance("train-x-1", "worker", 1, 0, "node-2", "node-2", "node-2.local",
                "10.0.0.2", List.of(29500), false);
        return new io.slipstream.api.run.ClusterMetadata(io.slipstream.api.run.ClusterMetadata.FORMAT_VERSION, "train-x", "team-a", "train", 2, 2,
                "InOrder", new io.slipstream.api.run.ClusterMetadata.Address("10.0.0.1", 29500), List.of(coordinator, worker),
                List.of(new io.slipstream.api.run.ClusterMetadata.Storage("shared", "job", "/data/shared", null)));
    }

    @Test
    void readsTheFileTheServerWrites(@TempDir Path dir) throws IOException {
        Path file = dir.resolve("metadata.json");
        Files.writeString(file, Json.mapper().writeValueAsString(written()));
        Map<String, Object> tree = Json.mapper().readValue(Files.readString(file), Map.class);
        assertThat(tree).containsKeys("version", "runId", "master", "instances", "storage");

        ClusterMetadata read = Slipstream.of(Map.of("SLIPSTREAM_METADATA_FILE", file.toString())).metadata();
        assertThat(read.version()).isEqualTo(1);
        assertThat(read.runId()).isEqualTo("train-x");
        assertThat(read.workspace()).isEqualTo("team-a");
        assertThat(read.attempt()).isEqualTo(2);
        assertThat(read.worldSize()).isEqualTo(2);
        assertThat(read.startupOrder()).isEqualTo("InOrder");
        assertThat(read.master()).isEqualTo(new ClusterMetadata.Address("10.0.0.1", 29500));
        assertThat(read.instances()).containsExactly(
                new ClusterMetadata.Instance("train-x-0", "coordinator", 0, 0, "node-1", "node-1", "node-1.local", "10.0.0.1", List.of(29500, 29501), true,
                        Map.of("rack", "r2")),
                new ClusterMetadata.Instance("train-x-1", "worker", 1, 0, "node-2", "node-2", "node-2.local", "10.0.0.2", List.of(29500), false));
        assertThat(read.storage()).containsExactly(new ClusterMetadata.Storage("shared", "job", "/data/shared", null));
    }

    @Test
    void everyFieldOfTheServersFormatIsKnown() {
        var sdk = java.util.Arrays.stream(ClusterMetadata.class.getRecordComponents()).map(c -> c.getName()).toList();
        var api = java.util.Arrays.stream(io.slipstream.api.run.ClusterMetadata.class.getRecordComponents()).map(c -> c.getName()).toList();
        assertThat(sdk).isEqualTo(api);
        var sdkInstance = java.util.Arrays.stream(ClusterMetadata.Instance.class.getRecordComponents()).map(c -> c.getName()).toList();
        var apiInstance = java.util.Arrays.stream(io.slipstream.api.run.ClusterMetadata.Instance.class.getRecordComponents()).map(c -> c.getName()).toList();
        assertThat(sdkInstance).isEqualTo(apiInstance);
    }

    @Test
    void skipsFieldsItDoesNotKnowAndRefusesAnotherVersion() {
        assertThat(ClusterMetadata.parse("{\"version\": 1, \"runId\": \"r\", \"later\": {\"x\": [1]}, \"instances\": [], \"storage\": []}").runId())
                .isEqualTo("r");
        assertThatThrownBy(() -> ClusterMetadata.parse("{\"version\": 2}")).hasMessageContaining("version 2");
        assertThatThrownBy(() -> ClusterMetadata.parse("[]")).isInstanceOf(IllegalArgumentException.class);
    }
}
