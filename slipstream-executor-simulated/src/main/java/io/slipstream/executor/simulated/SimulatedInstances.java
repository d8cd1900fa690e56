package io.slipstream.executor.simulated;

import io.slipstream.api.codec.Json;
import io.slipstream.api.run.InstanceId;
import io.slipstream.api.run.RunId;
import io.slipstream.executor.ExecutorException;
import java.io.IOException;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Comparator;
import java.util.stream.Stream;

/**
 * Where simulated instances are kept: one small JSON file per instance, {@code <root>/instances/<run>/<attempt>.<rank>.json},
 * replaced whole (written beside it, then moved over it), so that a reader never sees half of one. The server's own
 * files: no workload runs here to reach them. Run ids are of a checked form ({@link RunId}), fit for a file name.
 */
final class SimulatedInstances {
    private final Path root;

    SimulatedInstances(Path root) {
        this.root = root.resolve("instances");
        try {
            Files.createDirectories(this.root);
        } catch (IOException e) {
            throw new ExecutorException("cannot create " + this.root + ": " + e.getMessage(), e);
        }
    }

    private Path runDir(RunId run) {
        return root.resolve(run.value());
    }

    private Path file(InstanceId id) {
        return runDir(id.runId()).resolve(id.attempt() + "." + id.rank() + ".json");
    }

    /** The instance as last saved ({@code null}: never launched, or forgotten). */
    SimulatedInstance load(InstanceId id) {
        try {
            return Json.mapper().readValue(Files.readAllBytes(file(id)), SimulatedInstance.class);
        } catch (NoSuchFileException e) {
            return null;
        } catch (IOException | RuntimeException e) {
            throw new ExecutorException("cannot read the simulated instance " + id + " in " + file(id) + ": " + e.getMessage(), e);
        }
    }

    void save(InstanceId id, SimulatedInstance instance) {
        Path file = file(id);
        Path written = file.resolveSibling(file.getFileName() + ".new");
        try {
            Files.createDirectories(file.getParent());
            Files.write(written, Json.mapper().writeValueAsBytes(instance));
            try {
                Files.move(written, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
            } catch (AtomicMoveNotSupportedException e) {
                Files.move(written, file, StandardCopyOption.REPLACE_EXISTING);
            }
        } catch (IOException | RuntimeException e) {
            throw new ExecutorException("cannot save the simulated instance " + id + " in " + file + ": " + e.getMessage(), e);
        }
    }

    /** Removes every instance of the run (idempotent). */
    void forget(RunId run) {
        Path dir = runDir(run);
        if (!Files.isDirectory(dir)) {
            return;
        }
        try (Stream<Path> walk = Files.walk(dir)) {
            for (Path path : walk.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(path);
            }
        } catch (IOException e) {
            throw new ExecutorException("cannot remove the simulated instances of run " + run + " in " + dir + ": " + e.getMessage(), e);
        }
    }
}
