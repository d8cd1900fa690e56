package io.slipstream.executor.slurm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.slipstream.api.spec.StartupProbe;
import io.slipstream.executor.local.files.InstanceDirectory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The wrapper every job runs, run here as Slurm would run it (bash, the instance's directory as its argument, Slurm's
 * variables in its environment), without Slurm.
 */
class InstanceScriptTest {
    @TempDir
    Path tmp;

    private Path script;
    private InstanceDirectory dir;

    @BeforeEach
    void setUp() throws Exception {
        assumeTrue(Files.isExecutable(Path.of("/bin/bash")) && Files.isExecutable(Path.of("/usr/bin/setsid")), "skipped: no bash or setsid");
        script = InstanceScript.install(tmp.resolve("state"));
        dir = new InstanceDirectory(Files.createDirectories(tmp.resolve("instance")));
        Files.createDirectories(dir.path().resolve(InstanceScript.REPORT)); // as InstanceDirectory.create makes it
        dir.writeEnvironment(Map.of("GREETING", "hello 'world'", "CUDA_VISIBLE_DEVICES", "1", "PATH", System.getenv("PATH")));
    }

    /** Starts the wrapper in a process group of its own (as slurmstepd does), Slurm's variables given. */
    private Process start(List<String> command, Map<String, String> slurm) throws Exception {
        InstanceScript.writeCommand(dir.path(), command);
        ProcessBuilder builder = new ProcessBuilder("/usr/bin/setsid", "/bin/bash", script.toString(), dir.path().toString())
                .redirectOutput(dir.path().resolve("stdout.log").toFile()).redirectError(dir.path().resolve("stderr.log").toFile());
        builder.environment().put("SLURM_JOB_ID", "42");
        builder.environment().remove("CUDA_VISIBLE_DEVICES");
        builder.environment().putAll(slurm);
        return builder.start();
    }

    private String stdout() throws Exception {
        return Files.readString(dir.path().resolve("stdout.log"));
    }

    @Test
    void theCommandRunsAsGivenInItsEnvironmentAndItsExitCodeIsRecorded() throws Exception {
        Process wrapper = start(List.of("sh", "-c", "printf '%s|' \"$@\" \"$GREETING\" \"$CUDA_VISIBLE_DEVICES\"; exit 7", "sh", "a b",
                "$(echo injected)", "; exit 9", "*", ""), Map.of());
        assertThat(wrapper.waitFor(30, TimeUnit.SECONDS)).isTrue();
        assertThat(wrapper.exitValue()).isEqualTo(7);
        assertThat(stdout()).isEqualTo("a b|$(echo injected)|; exit 9|*||hello 'world'|1|");
        assertThat(InstanceScript.exitCode(dir.path())).isEqualTo(7);
        assertThat(InstanceScript.recordedJob(dir.path())).isEqualTo("42");
    }

    @Test
    void slurmsChoiceOfGpusWins() throws Exception {
        Process wrapper = start(List.of("sh", "-c", "echo \"$CUDA_VISIBLE_DEVICES $NVIDIA_VISIBLE_DEVICES\""), Map.of("CUDA_VISIBLE_DEVICES", "2,3"));
        assertThat(wrapper.waitFor(30, TimeUnit.SECONDS)).isTrue();
        assertThat(stdout()).isEqualTo("2,3 2,3\n");
    }

    @Test
    void aCommandThatCannotBeFoundExitsWith127() throws Exception {
        Process wrapper = start(List.of("no-such-program-xyz"), Map.of());
        assertThat(wrapper.waitFor(30, TimeUnit.SECONDS)).isTrue();
        assertThat(InstanceScript.exitCode(dir.path())).isEqualTo(127);
        assertThat(Files.readString(dir.path().resolve("stderr.log"))).contains("no-such-program-xyz");
    }

    /** A stop signals every process of the job (scancel --full): the wrapper outlives it and records how the command ended. */
    @Test
    void theWrapperOutlivesThePoliteSignalToRecordTheEnd() throws Exception {
        Process wrapper = start(List.of("sh", "-c", "trap 'echo saving; exit 3' TERM; echo started; while true; do sleep 0.1; done"), Map.of());
        awaitStdout("started");
        assertThat(new ProcessBuilder("kill", "-TERM", "--", "-" + wrapper.pid()).start().waitFor()).isZero();
        assertThat(wrapper.waitFor(30, TimeUnit.SECONDS)).isTrue();
        assertThat(stdout()).isEqualTo("started\nsaving\n");
        assertThat(InstanceScript.exitCode(dir.path())).isEqualTo(3);
    }

    @Test
    void theStartupProbeIsTriedUntilItPassesOrFailedEnoughTimes() throws Exception {
        InstanceScript.writeProbe(dir.path(), new StartupProbe(List.of("false"), 1, 2, 0));
        Path failed = dir.path().resolve(InstanceScript.REPORT).resolve(InstanceScript.PROBE_FAILED);
        Process wrapper = start(List.of("sh", "-c", "while [ ! -e \"$1\" ]; do sleep 0.1; done", "sh", failed.toString()), Map.of());
        assertThat(wrapper.waitFor(30, TimeUnit.SECONDS)).isTrue();
        assertThat(InstanceScript.probeFailure(dir.path())).isEqualTo("startup probe failed 2 time(s) in a row (last exit code 1)");
        assertThat(InstanceScript.ready(dir.path())).isFalse();

        Files.delete(failed);
        InstanceScript.writeProbe(dir.path(), new StartupProbe(List.of("sh", "-c", "test \"$GREETING\" = \"hello 'world'\""), 1, 3, 0));
        Path ready = dir.path().resolve(InstanceScript.REPORT).resolve(InstanceScript.READY);
        wrapper = start(List.of("sh", "-c", "while [ ! -e \"$1\" ]; do sleep 0.1; done", "sh", ready.toString()), Map.of());
        assertThat(wrapper.waitFor(30, TimeUnit.SECONDS)).isTrue();
        assertThat(InstanceScript.ready(dir.path())).as("the probe runs in the instance's environment").isTrue();
        assertThat(InstanceScript.probeFailure(dir.path())).isNull();
    }

    private void awaitStdout(String text) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!stdout().contains(text)) {
            assertThat(System.nanoTime()).as("the command prints " + text).isLessThan(deadline);
            TimeUnit.MILLISECONDS.sleep(20); // polling its output, with a deadline
        }
    }

    @Test
    void theScriptIsTheSameTextForEveryInstance() {
        List<String> lines = new ArrayList<>(new String(InstanceScript.text(), java.nio.charset.StandardCharsets.UTF_8).lines().toList());
        assertThat(lines.get(0)).isEqualTo("#!/bin/bash");
        assertThat(lines).noneMatch(line -> line.contains("eval"));
    }
}
