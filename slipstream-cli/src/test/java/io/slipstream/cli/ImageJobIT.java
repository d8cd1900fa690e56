package io.slipstream.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.slipstream.api.codec.Json;
import io.slipstream.cli.SlipstreamProcess.Result;
import io.slipstream.cli.SlipstreamProcess.Server;
import io.slipstream.testing.BusyboxImage;
import io.slipstream.testing.NoProcessLeftBehind;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * A job that brings its own image, through the real server, CLI and processes on the local executor: four ranks in
 * a busybox image pass a token around their run's private network (each finds the next rank's port in its metadata
 * file) and report progress to the API with the run's token through the run's forwarder; an instance of another run
 * cannot connect to them; an image the executor cannot read is refused at apply, naming the field. Needs root and the
 * image tools (as CI has, .ci/run); skipped otherwise, saying why.
 */
@ExtendWith(NoProcessLeftBehind.class)
class ImageJobIT {
    private static final Duration DEADLINE = Duration.ofSeconds(90);
    private static final String RING = String.join("\n",
            "port_of() { grep '\"ports\"' \"$SLIPSTREAM_METADATA_FILE\" | sed -n \"$(($1 + 1))p\" | tr -dc '0-9,' | cut -d, -f1; }",
            "send() { i=0; while [ $i -lt 600 ]; do echo \"$1\" | nc 127.0.0.1 \"$2\" 2>/dev/null && return 0; i=$((i+1)); sleep 0.1; done; return 1; }",
            // The listener hands the connection to a script that reads it to its end (busybox nc on its own may see its
            // stdin end first and drop what came in); a listen that fails (a client's ephemeral port took the port) is tried again.
            "printf '#!/bin/sh\\nexec cat > /tmp/heard\\n' > /tmp/recv; chmod +x /tmp/recv",
            "hear() { i=0; heard=; while [ -z \"$heard\" ] && [ $i -lt 100 ]; do nc -l -p \"$SLIPSTREAM_PORT\" -e /tmp/recv;"
                    + " heard=$(cat /tmp/heard 2>/dev/null); i=$((i+1)); done; }",
            "next=$(port_of $(( (RANK + 1) % WORLD_SIZE )))",
            "if [ \"$RANK\" = 0 ]; then",
            "  (hear; echo \"$heard\" > /tmp/in) & listener=$!",
            "  send 0 \"$next\" || exit 3",
            "  wait $listener",
            "  echo \"ring=$(cat /tmp/in)\"",
            "  wget -q -O - --header \"Authorization: Bearer $SLIPSTREAM_RUN_TOKEN\" --header 'Content-Type: application/json'"
                    + " --post-data '{\"step\": 7}' \"$SLIPSTREAM_SERVER/api/v1/runs/$SLIPSTREAM_RUN_ID/instances/$SLIPSTREAM_RANK/progress\""
                    + " && echo progress-sent",
            "else",
            "  hear",
            "  send \"$heard$RANK\" \"$next\" || exit 3",
            "fi");

    @TempDir
    static Path work;

    private static Server server;

    @BeforeAll
    static void startServer() throws Exception {
        String missing = BusyboxImage.missing();
        assumeTrue(missing == null, () -> "skipped: " + missing);
        // Instances run under uids of their own only where they can pass through to the data dir (isolation: auto).
        Files.setPosixFilePermissions(work, java.nio.file.attribute.PosixFilePermissions.fromString("rwx--x--x"));
        Path images = Files.createDirectories(work.resolve("images"));
        BusyboxImage.build(images);
        server = SlipstreamProcess.startServer(work.resolve("data"));
        String workspace = String.join("\n", "apiVersion: slipstream/v1", "kind: Workspace", "metadata: {name: demo}", "spec: {members: []}", "---", "");
        Files.writeString(work.resolve("ring.yaml"), workspace + job("ring", 4, "oci-archive:" + images.resolve("busybox.tar"), RING));
        Files.writeString(work.resolve("listener.yaml"), workspace + job("listener", 1, "oci:" + images.resolve("layout") + ":latest",
                "echo \"port=$SLIPSTREAM_PORT\"; exec nc -l -p \"$SLIPSTREAM_PORT\""));
        Files.writeString(work.resolve("prober.yaml"), workspace + job("prober", 1, "docker-archive:" + images.resolve("busybox-docker.tar"),
                "if nc 127.0.0.1 \"$TARGET\" </dev/null; then echo reached; else echo refused; fi"));
        Files.writeString(work.resolve("unreadable.yaml"), workspace + job("unreadable", 1, "dir:" + images.resolve("layout"), "true"));
    }

    private static String job(String name, int replicas, String image, String script) {
        StringBuilder yaml = new StringBuilder(String.join("\n", "apiVersion: slipstream/v1", "kind: Job", "metadata: {name: " + name + ", workspace: demo}",
                "spec:", "  nodeGroups:", "    - name: main", "      replicas: " + replicas, "      image: '" + image + "'",
                "      resources: {cpu: 1, memory: 64Mi}", "      env: {TARGET: '1'}", "      command:", "        - sh", "        - -c", "        - |"));
        for (String line : script.split("\n")) {
            yaml.append("\n          ").append(line);
        }
        return yaml.toString();
    }

    @AfterAll
    static void stopServer() throws Exception {
        if (server != null) {
            server.close();
            BusyboxImage.removeNetworks(server.dataDir());
        }
    }

    private static Result cli(String... args) throws Exception {
        List<String> all = new ArrayList<>(List.of(args));
        all.addAll(List.of("--server", server.url(), "--data-dir", server.dataDir().toString()));
        return SlipstreamProcess.cli(work, all.toArray(String[]::new));
    }

    private static String submit(String job, String... extra) throws Exception {
        List<String> args = new ArrayList<>(List.of("submit", "-f", job + ".yaml"));
        args.addAll(List.of(extra));
        Result result = cli(args.toArray(String[]::new));
        assertThat(result.exit()).as(result.err()).isZero();
        return result.lastLine();
    }

    private static String state(String run) throws Exception {
        return Json.mapper().readTree(cli("get", "run", run, "-o", "json").out()).get("state").asString();
    }

    /** The run's state once it ended, or what it is at the deadline. */
    private static String awaitEnd(String run) throws Exception {
        long deadline = System.nanoTime() + 2 * DEADLINE.toNanos();
        String state = state(run);
        while (!List.of("SUCCEEDED", "FAILED", "CANCELLED").contains(state) && System.nanoTime() < deadline) {
            TimeUnit.MILLISECONDS.sleep(200);
            state = state(run);
        }
        return state;
    }

    @Test
    void fourRanksInAnImagePassATokenAroundTheirRunsPrivateNetworkAndReachTheApi() throws Exception {
        String run = submit("ring");
        String state = awaitEnd(run);
        String logs = cli("logs", run).out();
        assertThat(state).as(logs + cli("get", "run", run, "-o", "yaml").out()).isEqualTo("SUCCEEDED");
        assertThat(logs).contains("ring=0123", "progress-sent");
    }

    @Test
    void anInstanceOfAnotherRunCannotConnectToARunsInstances() throws Exception {
        String listener = submit("listener");
        long deadline = System.nanoTime() + DEADLINE.toNanos();
        Matcher port = Pattern.compile("port=(\\d+)").matcher("");
        while (!port.reset(cli("logs", listener).out()).find()) {
            assertThat(System.nanoTime()).as("the listener says its port within the deadline").isLessThan(deadline);
            TimeUnit.MILLISECONDS.sleep(100);
        }
        String prober = submit("prober", "--set", "nodeGroups.main.env.TARGET=" + port.group(1));
        assertThat(awaitEnd(prober)).isEqualTo("SUCCEEDED");
        assertThat(cli("logs", prober).out()).contains("refused").doesNotContain("reached");
        // The same probe from the machine's network reaches nothing either: the listener is in its run's network only.
        String fromHost = submit("prober", "--set", "nodeGroups.main.env.TARGET=" + port.group(1), "--set", "network=Host");
        assertThat(awaitEnd(fromHost)).isEqualTo("SUCCEEDED");
        assertThat(cli("logs", fromHost).out()).contains("refused");
        assertThat(state(listener)).as("the listener was never reached: it still waits").isEqualTo("RUNNING");
        Result cancel = cli("cancel", listener);
        assertThat(cancel.exit()).as(cancel.err()).isZero();
        while (!state(listener).equals("CANCELLED")) {
            assertThat(System.nanoTime()).as("cancelled within the deadline").isLessThan(deadline + DEADLINE.toNanos());
            TimeUnit.MILLISECONDS.sleep(100);
        }
    }

    @Test
    void anImageTheExecutorCannotReadIsRefusedAtApplyNamingTheField() throws Exception {
        Result result = cli("submit", "-f", "unreadable.yaml");
        assertThat(result.exit()).isNotZero();
        assertThat(result.err()).contains("spec.nodeGroups[0].image", "transport 'dir' is not supported");
    }
}
