package io.slipstream.executor.simulated;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.slipstream.api.run.InstanceId;
import io.slipstream.api.run.RunId;
import io.slipstream.executor.ExecutorException;
import io.slipstream.executor.InstanceReport;
import io.slipstream.executor.LaunchSpec;
import io.slipstream.executor.LogStream;
import io.slipstream.testing.TestingClock;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What the simulated executor adds to the contract: instances that end when their run's labels say, with the code they
 * say; a stop acknowledged after the configured delay (143) or killed at the end of its grace period (137); and an
 * executor made after a restart that ends an adopted instance when it would have ended, its clock having gone on.
 * The clock is the test's: every end is checked to the millisecond, as of the clock, not of when a thread woke up.
 */
class SimulatedExecutorTest {
    private static final Instant T0 = Instant.parse("2026-12-01T00:00:00Z");

    @TempDir
    Path dataDir;
    private final TestingClock clock = new TestingClock(T0);
    private final LinkedBlockingQueue<InstanceReport> reports = new LinkedBlockingQueue<>();
    private final List<SimulatedExecutor> made = new java.util.ArrayList<>();

    private SimulatedExecutor executor(Duration ackAfter) {
        SimulatedExecutor executor = new SimulatedExecutor(SimulatedExecutorSettings.defaults().withStopAcknowledgedAfter(ackAfter),
                dataDir.resolve("simulated"), clock);
        executor.setListener(reports::add);
        executor.fence(1);
        made.add(executor);
        return executor;
    }

    @AfterEach
    void close() {
        made.forEach(SimulatedExecutor::close);
    }

    private static LaunchSpec spec(InstanceId id, Map<String, String> labels) {
        return new LaunchSpec(id, "main-0", "node-2", List.of(0), List.of("train.py"), Map.of(), null, null).withLabels(labels);
    }

    private static InstanceId instance(String run) {
        return new InstanceId(new RunId(run), 1, 0);
    }

    /** Reports taken from the queue that were not yet asked for, in order. */
    private final List<InstanceReport> seen = new java.util.ArrayList<>();

    /** The first report of {@code id} of that type not asked for before (others are kept for later questions). */
    private <T extends InstanceReport> T next(InstanceId id, Class<T> type) throws InterruptedException {
        while (true) {
            for (var it = seen.iterator(); it.hasNext(); ) {
                InstanceReport report = it.next();
                if (report.id().equals(id) && type.isInstance(report)) {
                    it.remove();
                    return type.cast(report);
                }
            }
            InstanceReport report = reports.poll(10, TimeUnit.SECONDS);
            assertThat(report).as("a report of " + id).isNotNull();
            seen.add(report);
        }
    }

    @Test
    void anInstanceRunsForItsLabelsDurationAndExitsWithItsCode() throws Exception {
        SimulatedExecutor executor = executor(Duration.ofSeconds(1));
        InstanceId id = instance("short");
        executor.launch(spec(id, Map.of(SimulatedLabels.DURATION, "300ms", SimulatedLabels.EXIT_CODE, "3")));
        assertThat(next(id, InstanceReport.Running.class).at()).isEqualTo(T0);
        InstanceReport.Exited exited = next(id, InstanceReport.Exited.class);
        assertThat(exited.exitCode()).isEqualTo(3);
        assertThat(exited.terminated()).isFalse();
        assertThat(exited.at()).as("as of the clock: started + 300 ms").isEqualTo(T0.plusMillis(300));
        assertThat(new String(executor.readLogTail(id, executor.find(id).orElseThrow(), LogStream.STDOUT, 1000).data(), StandardCharsets.UTF_8))
                .contains("simulated instance on node-2").contains("runs 300ms, then exits 3").contains("exited 3");
    }

    @Test
    void aStopIsAcknowledgedAfterTheSetDelayOrKilledWhenTheGracePeriodEndsFirst() throws Exception {
        SimulatedExecutor executor = executor(Duration.ofMillis(200));
        InstanceId acknowledges = instance("acknowledges");
        InstanceId killed = instance("killed");
        Map<String, String> first = executor.launch(spec(acknowledges, Map.of()));
        Map<String, String> second = executor.launch(spec(killed, Map.of()));
        clock.advance(Duration.ofSeconds(5));
        executor.terminate(acknowledges, first, Duration.ofSeconds(30), "ReclaimedByQuotaOwner: test");
        executor.terminate(killed, second, Duration.ofMillis(100), "Timeout: test");
        InstanceReport.Exited killedExit = next(killed, InstanceReport.Exited.class);
        assertThat(killedExit.exitCode()).isEqualTo(137);
        assertThat(killedExit.at()).isEqualTo(T0.plusSeconds(5).plusMillis(100));
        InstanceReport.Exited acknowledged = next(acknowledges, InstanceReport.Exited.class);
        assertThat(acknowledged.exitCode()).isEqualTo(143);
        assertThat(acknowledged.terminated()).isTrue();
        assertThat(acknowledged.reason()).isEqualTo("ReclaimedByQuotaOwner: test");
        assertThat(acknowledged.at()).isEqualTo(T0.plusSeconds(5).plusMillis(200));
    }

    @Test
    void anAdoptedInstanceEndsWhenItWouldHaveEndedHadTheServerNotStopped() throws Exception {
        SimulatedExecutor before = executor(Duration.ofSeconds(1));
        InstanceId ends = instance("ends-while-down");
        InstanceId runs = instance("runs-on");
        Map<String, String> endsHandle = before.launch(spec(ends, Map.of(SimulatedLabels.DURATION, "1m", SimulatedLabels.EXIT_CODE, "7")));
        Map<String, String> runsHandle = before.launch(spec(runs, Map.of(SimulatedLabels.DURATION, "10m")));
        next(runs, InstanceReport.Running.class);
        before.close(); // the server stops; its instances' clocks go on
        clock.advance(Duration.ofMinutes(3));
        reports.clear();
        seen.clear();

        SimulatedExecutor after = executor(Duration.ofSeconds(1));
        after.adopt(Map.of(ends, endsHandle, runs, runsHandle));
        InstanceReport.Exited exited = next(ends, InstanceReport.Exited.class);
        assertThat(exited.exitCode()).isEqualTo(7);
        assertThat(exited.at()).as("its own end, a minute after its start, not the adoption").isEqualTo(T0.plusSeconds(60));
        assertThat(next(runs, InstanceReport.Running.class).at()).isEqualTo(T0.plusSeconds(180));
        after.terminate(runs, runsHandle, Duration.ZERO, "NodeLost: test");
        assertThat(next(runs, InstanceReport.Exited.class).exitCode()).as("no grace period: killed at once").isEqualTo(137);
    }

    @Test
    void aSecondStopThatEndsItSoonerWinsAndNoGracePeriodKillsAtOnce() throws Exception {
        SimulatedExecutor executor = executor(Duration.ofSeconds(20));
        InstanceId id = instance("stopped-twice");
        Map<String, String> handle = executor.launch(spec(id, Map.of()));
        executor.terminate(id, handle, Duration.ofSeconds(60), "ReclaimedByQuotaOwner: test");
        clock.advance(Duration.ofSeconds(2));
        executor.terminate(id, handle, Duration.ZERO, "NodeLost: test");
        InstanceReport.Exited exited = next(id, InstanceReport.Exited.class);
        assertThat(exited.exitCode()).isEqualTo(137);
        assertThat(exited.at()).isEqualTo(T0.plusSeconds(2));
    }

    /** A server that crashed after a launch, before it recorded it, launches again: the instance is adopted, and ends. */
    @Test
    void launchingAgainAfterACrashAdoptsTheInstanceAndEndsIt() throws Exception {
        SimulatedExecutor before = executor(Duration.ofSeconds(1));
        InstanceId id = instance("relaunched-after-crash");
        LaunchSpec spec = spec(id, Map.of(SimulatedLabels.DURATION, "30s"));
        Map<String, String> first = before.launch(spec);
        before.close();
        clock.advance(Duration.ofMinutes(1));
        reports.clear();
        seen.clear();

        SimulatedExecutor after = executor(Duration.ofSeconds(1));
        assertThat(after.launch(spec)).as("the same instance").isEqualTo(first);
        assertThat(next(id, InstanceReport.Exited.class).at()).isEqualTo(T0.plusSeconds(30));
    }

    @Test
    void portsRunOutWithAClearErrorNotAHang() {
        SimulatedExecutor executor = executor(Duration.ofSeconds(1));
        Set<Integer> taken = new java.util.HashSet<>();
        for (int port = 1024; port <= 65_535; port++) {
            taken.add(port);
        }
        taken.remove(40_000);
        assertThat(executor.endpoint(instance("one"), "w", "main-0", "node-1", 1, taken).ports()).containsExactly(40_000);
        taken.add(40_000);
        assertThatThrownBy(() -> executor.endpoint(instance("two"), "w", "main-0", "node-1", 1, taken))
                .isInstanceOf(ExecutorException.class).hasMessageContaining("no 1 free ports");
    }

    @Test
    void aHandleOfAnotherLaunchIsLostNotAdopted() throws Exception {
        SimulatedExecutor executor = executor(Duration.ofSeconds(1));
        InstanceId id = instance("relaunched");
        executor.launch(spec(id, Map.of()));
        executor.adopt(Map.of(id, Map.of("simulated", "not-its-token", "node", "node-2")));
        assertThat(next(id, InstanceReport.Lost.class).reason()).contains("no such simulated instance");
    }

    @Test
    void aLaunchWithInvalidLabelsIsRefusedNamingTheLabel() {
        SimulatedExecutor executor = executor(Duration.ofSeconds(1));
        assertThatThrownBy(() -> executor.launch(spec(instance("bad"), Map.of(SimulatedLabels.DURATION, "soon"))))
                .isInstanceOf(ExecutorException.class).hasMessageContaining(SimulatedLabels.DURATION).hasMessageContaining("soon");
        assertThat(executor.find(instance("bad"))).as("nothing was started").isEmpty();
    }
}
