package io.slipstream.executor.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.slipstream.api.spec.Resources;
import io.slipstream.api.run.InstanceId;
import io.slipstream.api.run.RunId;
import io.slipstream.executor.InstanceReport;
import io.slipstream.executor.LaunchSpec;
import io.slipstream.executor.NodeInfo;
import io.slipstream.executor.local.image.ImageSettings;
import io.slipstream.executor.local.process.LaunchHelper;
import io.slipstream.executor.local.process.SupervisorProgram;
import io.slipstream.executor.local.uid.Isolation;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The launch helper ({@code slipstream-launch --serve}) that forks the supervisors where the launcher is the binary: each
 * start hears its own supervisor's word and end, however many start at once; a supervisor that fails says why; and
 * instances outlive the helper, their ends still reported, while the next launch starts another helper. The executor's
 * whole contract runs through it too (LocalProcessExecutorTest and the isolated suites).
 */
class LaunchHelperTest {
    @TempDir
    Path dataDir;

    private LocalProcessExecutor executor;
    private final Map<InstanceId, InstanceReport.Exited> exits = new ConcurrentHashMap<>();

    @BeforeEach
    void needsTheBinary() {
        assumeTrue(BuiltProgram.mode() == SupervisorProgram.Mode.binary, "this build has no launcher binary");
    }

    @AfterEach
    void close() {
        if (executor != null) {
            executor.close();
        }
    }

    private LocalProcessExecutor executor() {
        List<NodeInfo> nodes = List.of(new NodeInfo("node-1", new Resources(32000, 256L << 30, 8, "sim-gpu"), null, Map.of()));
        executor = new LocalProcessExecutor(dataDir.resolve("instances"), nodes, LocalProcessExecutor.DEFAULT_INHERITED_ENV, Isolation.off(), null,
                LocalProcessExecutor.DEFAULT_LOG_LIMIT_BYTES, 0, ImageSettings.DEFAULTS, SupervisorProgram.Mode.binary, Clock.systemUTC());
        executor.setListener(report -> {
            if (report instanceof InstanceReport.Exited exited) {
                exits.put(exited.id(), exited);
            }
        });
        return executor;
    }

    private static LaunchSpec spec(InstanceId id, String script) {
        return new LaunchSpec(id, "main-0", "node-1", List.of(), List.of("sh", "-c", script), Map.of(), null, null);
    }

    @Test
    void manyStartsAtOnceEachHearTheirOwnSupervisorsEnd() throws Exception {
        LocalProcessExecutor executor = executor();
        int count = 64;
        ExecutorService threads = Executors.newFixedThreadPool(8);
        try {
            List<Future<?>> launches = new ArrayList<>();
            for (int i = 0; i < count; i++) {
                InstanceId id = new InstanceId(new RunId("run-" + i), 1, 0);
                int code = i % 100;
                launches.add(threads.submit(() -> executor.launch(spec(id, "exit " + code))));
            }
            for (Future<?> launch : launches) {
                launch.get();
            }
        } finally {
            threads.shutdown();
        }
        await().atMost(Duration.ofSeconds(60)).until(() -> exits.size() == count);
        for (int i = 0; i < count; i++) {
            assertThat(exits.get(new InstanceId(new RunId("run-" + i), 1, 0)).exitCode()).as("run-%d's exit code", i).isEqualTo(i % 100);
        }
        assertThat(executor.launchHelperPid()).as("one helper forked them all").isPositive();
    }

    @Test
    void anInstanceOutlivesItsHelperAndItsEndIsStillReportedWhileTheNextLaunchStartsAnotherHelper() throws Exception {
        LocalProcessExecutor executor = executor();
        InstanceId waiting = new InstanceId(new RunId("waiting"), 1, 0);
        Path go = dataDir.resolve("go");
        executor.launch(spec(waiting, "while [ ! -e '" + go + "' ]; do sleep 0.05; done; exit 3"));
        long helper = executor.launchHelperPid();
        ProcessHandle.of(helper).orElseThrow().destroyForcibly();
        await().atMost(Duration.ofSeconds(10)).until(() -> ProcessHandle.of(helper).isEmpty() || !ProcessHandle.of(helper).get().isAlive());

        InstanceId next = new InstanceId(new RunId("next"), 1, 0);
        executor.launch(spec(next, "exit 4"));
        assertThat(executor.launchHelperPid()).as("another helper").isPositive().isNotEqualTo(helper);
        await().atMost(Duration.ofSeconds(30)).until(() -> exits.containsKey(next));
        assertThat(exits.get(next).exitCode()).isEqualTo(4);

        assertThat(exits).as("the first instance still runs").doesNotContainKey(waiting);
        Files.writeString(go, "");
        await().atMost(Duration.ofSeconds(30)).until(() -> exits.containsKey(waiting));
        assertThat(exits.get(waiting).exitCode()).isEqualTo(3);
    }

    @Test
    void aSupervisorThatCannotStartTheCommandFailsTheStartWithWhatItSaid() throws Exception {
        SupervisorProgram program = SupervisorProgram.of(SupervisorProgram.Mode.binary, dataDir);
        Path control = Files.createDirectories(dataDir.resolve("instance"));
        Files.writeString(control.resolve("env"), "export PATH='/usr/bin:/bin'\n");
        try (LaunchHelper helper = program.launchHelper(dataDir)) {
            List<String> arguments = List.of(control.toString(), control.toString(), "not-a-uid", "--clear-groups", "64", "", "", "", "", "", "true");
            assertThatThrownBy(() -> helper.start(control, control.resolve("supervisor.log"), arguments)).isInstanceOf(IOException.class)
                    .hasMessageContaining("exited before starting the command");
            assertThat(Files.readString(control.resolve("supervisor.log"))).contains("the uid is not a number");

            // The helper takes the next request as if nothing happened.
            LaunchHelper.Forked forked = helper.start(control, control.resolve("supervisor.log"),
                    List.of(control.toString(), control.toString(), "", "--clear-groups", "64", "", "", "", "", "", "true"));
            forked.ended().get();
            assertThat(Files.readString(control.resolve("exit_code")).strip()).isEqualTo("0");
        }
    }

    @Test
    void aStartTooLargeForTheHelperFailsAloneAndTheHelperServesTheNext() throws Exception {
        LocalProcessExecutor executor = executor();
        InstanceId first = new InstanceId(new RunId("first"), 1, 0);
        executor.launch(spec(first, "exit 5"));
        long helper = executor.launchHelperPid();

        List<String> huge = new ArrayList<>(List.of("true"));
        for (int i = 0; i < 140; i++) {
            huge.add("x".repeat(131072)); // each as long as the API lets an argument be; together over the limit
        }
        InstanceId tooLarge = new InstanceId(new RunId("too-large"), 1, 0);
        assertThatThrownBy(() -> executor.launch(new LaunchSpec(tooLarge, "main-0", "node-1", List.of(), huge, Map.of(), null, null)))
                .hasMessageContaining("more than a start can carry");

        InstanceId next = new InstanceId(new RunId("next"), 1, 0);
        executor.launch(spec(next, "exit 6"));
        await().atMost(Duration.ofSeconds(30)).until(() -> exits.containsKey(first) && exits.containsKey(next));
        assertThat(exits.get(next).exitCode()).isEqualTo(6);
        assertThat(executor.launchHelperPid()).as("the same helper").isEqualTo(helper);
    }

    @Test
    void aStartLargerThanTheHelpersFirstBufferStartsAndTheHelperLivesOn() throws Exception {
        LocalProcessExecutor executor = executor();
        InstanceId large = new InstanceId(new RunId("large"), 1, 0);
        String argument = "y".repeat(131071); // the API's longest argument, twice: over the helper's first 64 KiB
        executor.launch(new LaunchSpec(large, "main-0", "node-1", List.of(), List.of("sh", "-c", "[ ${#1} -eq 131071 ] && exit 7", "sh",
                argument, argument), Map.of(), null, null));
        long helper = executor.launchHelperPid();
        InstanceId next = new InstanceId(new RunId("after-large"), 1, 0);
        executor.launch(spec(next, "exit 8"));
        await().atMost(Duration.ofSeconds(30)).until(() -> exits.containsKey(large) && exits.containsKey(next));
        assertThat(exits.get(large).exitCode()).isEqualTo(7);
        assertThat(exits.get(next).exitCode()).isEqualTo(8);
        assertThat(executor.launchHelperPid()).as("the same helper").isEqualTo(helper);
    }
}
