package io.slipstream.server.console;

import static org.assertj.core.api.Assertions.assertThat;

import io.slipstream.api.spec.Resources;
import io.slipstream.executor.NodeInfo;
import io.slipstream.executor.local.LocalExecutorSettings;
import io.slipstream.executor.local.cgroup.Cgroups;
import io.slipstream.executor.local.uid.Isolation;
import io.slipstream.server.support.TestServer;
import io.slipstream.testing.NoProcessLeftBehind;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.openqa.selenium.By;
import org.openqa.selenium.WebElement;

/**
 * The console's nodes page shows where each node is in the cluster's topology, in a real headless Chromium against a
 * real server whose declared nodes carry the topology's labels (one of them none).
 */
@ExtendWith(NoProcessLeftBehind.class)
class ConsoleNodesTopologyTest {
    @TempDir
    static Path dataDir;

    private static TestServer server;
    private static ConsoleBrowser console;

    @BeforeAll
    static void start() throws Exception {
        ConsoleBrowser.requireChromium();
        List<NodeInfo> nodes = List.of(
                new NodeInfo("gpu-1", new Resources(4000, 8L << 30, 2, "sim-gpu"), null,
                        Map.of("topology.slipstream.io/block", "b1", "topology.slipstream.io/rack", "r2"), null),
                new NodeInfo("loose", new Resources(4000, 8L << 30, 0, null), null, Map.of(), null));
        server = TestServer.start(dataDir, config -> config.withExecutor(config.executor(LocalExecutorSettings.class)
                .withIsolation(Isolation.Mode.off).withCgroups(Cgroups.Mode.off).withNodes(nodes)));
        assertThat(server.post("/api/v1/apply", server.adminToken(), """
                apiVersion: slipstream/v1
                kind: Topology
                metadata: {name: default}
                spec:
                  levels:
                  - {name: block, nodeLabel: topology.slipstream.io/block}
                  - {name: rack, nodeLabel: topology.slipstream.io/rack}
                """).status()).isEqualTo(200);
        console = ConsoleBrowser.open(server);
    }

    @AfterAll
    static void stop() {
        try {
            if (console != null) {
                console.close();
            }
        } finally {
            if (server != null) {
                server.close();
            }
        }
    }

    @Test
    void eachNodeShowsItsPlaceInTheTopology() throws Exception {
        console.signIn(server.adminToken(), "#/nodes");
        console.go("#/nodes");
        WebElement placed = console.waitFor(By.cssSelector("[data-node='gpu-1'] .node-place"));
        assertThat(placed.getText()).isEqualTo("block b1 · rack r2");
        assertThat(console.driver().findElements(By.cssSelector("[data-node='loose'] .node-place"))).as("a node of no domain shows none").isEmpty();
        console.screenshot("nodes-topology");
        console.assertNoConsoleErrors();
    }
}
