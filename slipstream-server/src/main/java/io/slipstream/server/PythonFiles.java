package io.slipstream.server;

import java.io.IOException;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.file.FileSystem;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;

/**
 * The Python files that travel in the jar (the Python SDK, {@code sdk/python/slipstream}, and the PyTorch examples'
 * scripts), unpacked next to the instances' {@code slipstream} command: readable by every instance's uid, writable by
 * none, and replaced as a whole at each start (never edited in place), so that no instance imports a half-written
 * module.
 */
public final class PythonFiles {
    /** The examples whose {@code train.py} {@code slipstream example NAME} runs: {@code examples/NAME} in the jar. */
    public static final List<String> EXAMPLES = List.of("pytorch-ddp", "pytorch-elastic");

    /** Where each tree is in the jar, and where it goes below the tools directory. */
    private static final Map<String, String> TREES = trees();

    private PythonFiles() {
    }

    private static Map<String, String> trees() {
        Map<String, String> trees = new java.util.LinkedHashMap<>();
        trees.put("/python", "python");
        EXAMPLES.forEach(name -> trees.put("/examples/" + name, "examples/" + name));
        return Map.copyOf(trees);
    }

    /** The directory to put on {@code PYTHONPATH} for {@code import slipstream}. */
    public static Path sdk(Path bin) {
        return bin.resolve("python");
    }

    /** The script of the example {@code name} (one of {@link #EXAMPLES}) below {@code bin}. */
    public static Path example(Path bin, String name) {
        if (!EXAMPLES.contains(name)) {
            throw new IllegalArgumentException("no Python example " + name + " (there are " + EXAMPLES + ")");
        }
        return bin.resolve("examples").resolve(name).resolve("train.py");
    }

    /** Copies the Python trees of the jar this class is in below {@code bin}; false when it does not run from a jar. */
    public static boolean unpackOwn(Path bin) throws IOException {
        Optional<Path> jar = ownJar();
        if (jar.isEmpty()) {
            return false;
        }
        unpack(jar.get(), bin);
        return true;
    }

    /** Copies the jar's Python trees below {@code bin}; a jar without them (a build without the SDK) copies nothing. */
    static void unpack(Path jar, Path bin) throws IOException {
        try (FileSystem zip = FileSystems.newFileSystem(URI.create("jar:" + jar.toUri()), Map.of())) {
            for (var tree : TREES.entrySet()) {
                Path source = zip.getPath(tree.getKey());
                if (Files.isDirectory(source)) {
                    replace(source, bin.resolve(tree.getValue()));
                }
            }
        }
    }

    /** Writes the tree beside its destination, then swaps it in: an instance sees the old tree or the new one. */
    private static void replace(Path source, Path target) throws IOException {
        Path fresh = target.resolveSibling(target.getFileName() + ".new");
        deleteTree(fresh);
        List<Path> entries;
        try (Stream<Path> walk = Files.walk(source)) {
            entries = walk.toList();
        }
        for (Path entry : entries) {
            Path copy = fresh.resolve(source.relativize(entry).toString());
            if (Files.isDirectory(entry)) {
                Files.createDirectories(copy);
                Files.setPosixFilePermissions(copy, PosixFilePermissions.fromString("rwxr-xr-x"));
            } else if (entry.getFileName().toString().endsWith(".py")) {
                Files.copy(entry, copy, StandardCopyOption.REPLACE_EXISTING);
                Files.setPosixFilePermissions(copy, PosixFilePermissions.fromString("rw-r--r--"));
            }
        }
        Path old = target.resolveSibling(target.getFileName() + ".old");
        deleteTree(old);
        if (Files.exists(target)) {
            Files.move(target, old, StandardCopyOption.ATOMIC_MOVE);
        }
        Files.move(fresh, target, StandardCopyOption.ATOMIC_MOVE);
        deleteTree(old);
    }

    /** Deletes a tree without following links (a link is deleted, not what it points to). */
    public static void deleteTree(Path root) throws IOException {
        if (!Files.exists(root, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        try (Stream<Path> walk = Files.walk(root)) {
            for (Path path : walk.sorted(java.util.Comparator.reverseOrder()).toList()) {
                Files.delete(path);
            }
        }
    }

    /** The jar this server runs from; empty when it does not run from one (in tests). */
    static Optional<Path> ownJar() {
        try {
            var source = PythonFiles.class.getProtectionDomain().getCodeSource();
            if (source == null) {
                return Optional.empty();
            }
            Path location = Path.of(source.getLocation().toURI());
            return Files.isRegularFile(location) && location.toString().endsWith(".jar") ? Optional.of(location) : Optional.empty();
        } catch (URISyntaxException | RuntimeException e) {
            return Optional.empty();
        }
    }
}
