package io.slipstream.server;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Puts the {@code slipstream} command on every local instance's PATH ({@code <data-dir>/bin}), the way cluster
 * schedulers give jobs their own tools: workloads can use its helpers (the training example is one). The server's jar
 * is copied there because instances may run under uids of their own, which cannot read the server's files.
 */
final class InstanceTools {
    private static final Logger LOG = LoggerFactory.getLogger(InstanceTools.class);

    private InstanceTools() {
    }

    /** The directory to put first on instances' PATH, or empty when the server does not run from a jar (in tests). */
    static Optional<Path> install(Path dataDir) {
        Optional<Path> jar = PythonFiles.ownJar();
        if (jar.isEmpty()) {
            return Optional.empty();
        }
        Path bin = dataDir.resolve("bin");
        try {
            Files.createDirectories(bin);
            Files.setPosixFilePermissions(bin, PosixFilePermissions.fromString("rwxr-xr-x"));
            Path copy = bin.resolve("slipstream.jar");
            if (!Files.exists(copy) || Files.size(copy) != Files.size(jar.get())
                    || Files.getLastModifiedTime(copy).compareTo(Files.getLastModifiedTime(jar.get())) < 0) {
                Path temporary = bin.resolve("slipstream.jar.tmp");
                Files.copy(jar.get(), temporary, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.COPY_ATTRIBUTES);
                Files.setPosixFilePermissions(temporary, PosixFilePermissions.fromString("rw-r--r--"));
                Files.move(temporary, copy, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
            }
            Path java = Path.of(System.getProperty("java.home"), "bin", "java");
            Path script = bin.resolve("slipstream");
            if (copy.toString().contains("'") || java.toString().contains("'")) {
                LOG.warn("instances will not find the slipstream command: {} or {} has a quote in its path", copy, java);
                return Optional.empty();
            }
            PythonFiles.unpack(copy, bin);
            Files.writeString(script, script(bin, java, copy), StandardCharsets.UTF_8);
            Files.setPosixFilePermissions(script, PosixFilePermissions.fromString("rwxr-xr-x"));
            return Optional.of(bin);
        } catch (IOException e) {
            LOG.warn("instances will not find the slipstream command on their PATH: {}", e.toString());
            return Optional.empty();
        }
    }

    /**
     * The {@code slipstream} command for instances (paths without quotes). Client commands start faster with the C1
     * compiler only; workloads (the examples) get the full JIT. The PyTorch examples are Python themselves, exec'd so
     * that the stop notice's SIGTERM reaches them and nothing else.
     */
    static String script(Path bin, Path java, Path jar) {
        List<String> lines = new ArrayList<>(List.of("#!/bin/sh", "case \"${1:-} ${2:-}\" in"));
        for (String example : PythonFiles.EXAMPLES) {
            lines.add("  'example " + example + "') shift 2; train='" + PythonFiles.example(bin, example) + "' ;;");
        }
        lines.addAll(List.of(
                "  *) train= ;;",
                "esac",
                "if [ -n \"$train\" ]; then",
                "  python=\"${SLIPSTREAM_PYTHON:-/usr/bin/python3}\"",
                "  [ -x \"$python\" ] || python=python3",
                "  PYTHONPATH='" + PythonFiles.sdk(bin) + "'${PYTHONPATH:+:$PYTHONPATH} exec \"$python\" \"$train\" \"$@\"",
                "fi",
                "case \"${1:-}\" in",
                "  example) opts='-XX:+UseSerialGC' ;;",
                "  *) opts='-XX:TieredStopAtLevel=1 -XX:+UseSerialGC' ;;",
                "esac",
                "exec '" + java + "' $opts -jar '" + jar + "' \"$@\"",
                ""));
        return String.join("\n", lines);
    }
}
