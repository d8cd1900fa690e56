package io.slipstream.sdk;

import static org.assertj.core.api.Assertions.assertThat;

import io.slipstream.api.codec.Json;
import java.io.IOException;
import java.lang.reflect.RecordComponent;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Python SDK (sdk/python) in the README's test command: its own unittest suite, and the two SDKs against each
 * other: a checkpoint either writes the other reads, byte for byte the same file, and both read the metadata file the
 * control plane writes alike. python3 is part of the build machine (.ci/run); {@code -Dslipstream.python=...} picks
 * another interpreter (one with PyTorch runs the PyTorch tests, which are skipped otherwise).
 */
class PythonSdkTest {
    private static final Path SDK = Path.of("..", "sdk", "python").toAbsolutePath().normalize();
    /** Debian's python3 where there is one: python3-torch is for it, so the PyTorch tests run too. */
    private static final String PYTHON = System.getProperty("slipstream.python",
            java.nio.file.Files.isExecutable(java.nio.file.Path.of("/usr/bin/python3")) ? "/usr/bin/python3" : "python3");

    @TempDir
    Path dir;

    record Result(int exitCode, String output) {
    }

    private Result python(String... arguments) throws Exception {
        assertThat(SDK.resolve("slipstream").resolve("__init__.py"))
                .as("the Python SDK's source (tests run in the module's directory)").exists();
        List<String> command = new ArrayList<>(List.of(PYTHON));
        command.addAll(List.of(arguments));
        Path output = Files.createTempFile(dir, "python", ".out");
        ProcessBuilder builder = new ProcessBuilder(command).directory(SDK.getParent().getParent().toFile())
                .redirectErrorStream(true).redirectOutput(output.toFile());
        builder.environment().put("PYTHONPATH", SDK.toString());
        builder.environment().put("PYTHONDONTWRITEBYTECODE", "1"); // no __pycache__ in the source tree
        builder.environment().put("TMPDIR", System.getProperty("java.io.tmpdir")); // the build's, as @TempDir's (.ci/run)
        Process process;
        try {
            process = builder.start();
        } catch (IOException e) {
            throw new AssertionError(PYTHON + " cannot be started (" + e.getMessage() + "): the Python SDK's tests need "
                    + "Python 3.9 or later (part of the build machine, see .ci/run), or -Dslipstream.python=/path/to/python3", e);
        }
        if (!process.waitFor(10, TimeUnit.MINUTES)) {
            process.destroyForcibly().waitFor();
            throw new AssertionError(String.join(" ", command) + " did not end:\n" + Files.readString(output));
        }
        return new Result(process.exitValue(), Files.readString(output, StandardCharsets.UTF_8));
    }

    private String pythonOk(String... arguments) throws Exception {
        Result result = python(arguments);
        assertThat(result.exitCode()).as("%s %s exited with %d; its output:%n%s", PYTHON, String.join(" ", arguments),
                result.exitCode(), result.output()).isZero();
        return result.output().strip();
    }

    @Test
    void thePythonSdksOwnTestsPass() throws Exception {
        String output = pythonOk("-m", "unittest", "discover", "-s", SDK.resolve("tests").toString(), "-v");
        // The summary, and what was skipped (the PyTorch tests, where this interpreter has no PyTorch).
        System.out.println(output.lines().filter(line -> line.startsWith("Ran ") || line.startsWith("OK")
                || line.contains("... skipped '")).reduce((a, b) -> a + "\n" + b).orElse(output));
    }

    private static final String READ_CHECKPOINT = """
            import hashlib, sys
            from slipstream.checkpoints import Checkpoints
            checkpoint = Checkpoints(sys.argv[1]).latest()
            print(checkpoint.step, hashlib.sha256(checkpoint.data).hexdigest())
            """;

    private static final String WRITE_CHECKPOINT = """
            import sys
            from pathlib import Path
            from slipstream.checkpoints import Checkpoints
            Checkpoints(sys.argv[1]).save(int(sys.argv[2]), Path(sys.argv[3]).read_bytes())
            """;

    @Test
    void aCheckpointEitherSdkWritesTheOtherReadsAndTheFilesAreTheSame() throws Exception {
        byte[] data = new byte[300_000];
        new Random(42).nextBytes(data);
        long step = 1_234_567_890_123L;
        Path fromJava = dir.resolve("java");
        Path fromPython = dir.resolve("python");
        Path dataFile = dir.resolve("data.bin");
        Files.write(dataFile, data);

        Slipstream.of(Map.of("SLIPSTREAM_CHECKPOINT_DIR", fromJava.toString())).checkpoints(3).save(step, data);
        pythonOk("-c", WRITE_CHECKPOINT, fromPython.toString(), Long.toString(step), dataFile.toString());

        String name = Checkpoints.fileName(step);
        assertThat(Files.readAllBytes(fromPython.resolve(name))).isEqualTo(Files.readAllBytes(fromJava.resolve(name)));
        assertThat(pythonOk("-c", READ_CHECKPOINT, fromJava.toString())).isEqualTo(step + " " + sha256(data));
        Checkpoints.Checkpoint read = Slipstream.of(Map.of("SLIPSTREAM_CHECKPOINT_DIR", fromPython.toString())).checkpoints(3)
                .latest().orElseThrow();
        assertThat(read.step()).isEqualTo(step);
        assertThat(sha256(read.data())).isEqualTo(sha256(data));
    }

    @Test
    void anEmptyCheckpointOfStepZeroToo() throws Exception {
        Path fromJava = dir.resolve("java");
        Slipstream.of(Map.of("SLIPSTREAM_CHECKPOINT_DIR", fromJava.toString())).checkpoints(1).save(0, new byte[0]);
        assertThat(pythonOk("-c", READ_CHECKPOINT, fromJava.toString())).isEqualTo("0 " + sha256(new byte[0]));
    }

    private static final String READ_METADATA = """
            import dataclasses, json, sys
            from slipstream.metadata import ClusterMetadata
            metadata = dataclasses.asdict(ClusterMetadata.read(sys.argv[1]))
            del metadata["own_rank"]  # not in the file
            print(json.dumps(metadata))
            """;

    @Test
    void bothSdksReadTheMetadataFileTheControlPlaneWritesAlike() throws Exception {
        var coordinator = new io.slipstream.api.run.ClusterMetadata.Instance("train-x-0", "coordinator", 0, 0, "node-1", "node-1",
                "node-1.local", "10.0.0.1", List.of(29500, 29501), true);
        var worker = new io.slipstream.api.run.ClusterMetadata.Instance("train-x-1", "worker", 1, 0, "node-2", "node-2",
                "node-2.local", "10.0.0.2", List.of(29500), false);
        var written = new io.slipstream.api.run.ClusterMetadata(io.slipstream.api.run.ClusterMetadata.FORMAT_VERSION, "train-x",
                "team-a", "train", 2, 2, "InOrder", new io.slipstream.api.run.ClusterMetadata.Address("10.0.0.1", 29500),
                List.of(coordinator, worker), List.of(new io.slipstream.api.run.ClusterMetadata.Storage("shared", "job", "/data/shared", null)));
        Path file = dir.resolve("metadata.json");
        Files.writeString(file, Json.mapper().writeValueAsString(written));

        ClusterMetadata java = ClusterMetadata.read(file);
        Object python = Json.mapper().readValue(pythonOk("-c", READ_METADATA, file.toString()), Object.class);
        assertThat(python).isEqualTo(tree(java));
    }

    /** A record as the Python SDK's dataclasses.asdict shows it: snake_case names, lists for lists and tuples. */
    private static Object tree(Object value) throws ReflectiveOperationException {
        if (value instanceof Record record) {
            Map<String, Object> node = new LinkedHashMap<>();
            for (RecordComponent component : record.getClass().getRecordComponents()) {
                node.put(snakeCase(component.getName()), tree(component.getAccessor().invoke(record)));
            }
            return node;
        }
        if (value instanceof List<?> items) {
            List<Object> list = new ArrayList<>();
            for (Object item : items) {
                list.add(tree(item));
            }
            return list;
        }
        return value;
    }

    private static String snakeCase(String name) {
        return name.replaceAll("([A-Z])", "_$1").toLowerCase(Locale.ROOT);
    }

    private static String sha256(byte[] data) throws Exception {
        return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(data));
    }
}
