package io.slipstream.cli.command;

import io.slipstream.api.codec.Json;
import io.slipstream.cli.CliException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.stream.Stream;

/** Reads the documents a user points a command at ({@code -f FILE}, {@code -f DIR}, or {@code -f -} for standard input). */
final class Inputs {
    /** One file's bytes, and what to call it in messages. */
    record Source(String name, byte[] bytes) {
    }

    private Inputs() {
    }

    static byte[] read(String file) {
        try {
            if (file.equals("-")) {
                return limited(System.in);
            }
            Path path = Path.of(file);
            if (Files.isDirectory(path)) {
                throw new CliException(CliException.REJECTED, file + " is a directory; give a YAML or JSON file");
            }
            try (InputStream in = Files.newInputStream(path)) {
                return limited(in);
            }
        } catch (NoSuchFileException e) {
            throw new CliException(CliException.REJECTED, "no such file: " + file);
        } catch (IOException e) {
            throw new CliException(CliException.REJECTED, "cannot read " + file + ": " + e.getMessage());
        }
    }

    /**
     * Every {@code -f} in order; a directory stands for its {@code *.yaml}, {@code *.yml} and {@code *.json} files
     * (not those of its subdirectories), sorted by name, as kubectl reads one.
     */
    static List<Source> readAll(List<String> files) {
        List<Source> sources = new ArrayList<>();
        for (String file : expand(files)) {
            sources.add(new Source(file, read(file)));
        }
        return sources;
    }

    static List<String> expand(List<String> files) {
        List<String> expanded = new ArrayList<>();
        for (String file : files) {
            Path path = Path.of(file);
            if (file.equals("-") || !Files.isDirectory(path)) {
                expanded.add(file);
                continue;
            }
            List<String> inside;
            try (Stream<Path> list = Files.list(path)) {
                inside = list.filter(p -> Files.isRegularFile(p) && isDocumentFile(p.getFileName().toString())).map(Path::toString).sorted().toList();
            } catch (IOException e) {
                throw new CliException(CliException.REJECTED, "cannot read the directory " + file + ": " + e.getMessage());
            }
            if (inside.isEmpty()) {
                throw new CliException(CliException.REJECTED, "the directory " + file + " has no .yaml, .yml or .json file");
            }
            expanded.addAll(inside);
        }
        if (expanded.stream().filter("-"::equals).count() > 1) {
            throw new CliException(CliException.REJECTED, "-f -: standard input can be read once");
        }
        return expanded;
    }

    static boolean isDocumentFile(String name) {
        String lower = name.toLowerCase(Locale.ROOT);
        return !lower.startsWith(".") && (lower.endsWith(".yaml") || lower.endsWith(".yml") || lower.endsWith(".json"));
    }

    private static byte[] limited(InputStream in) throws IOException {
        byte[] bytes = in.readNBytes(Json.MAX_DOCUMENT_BYTES + 1);
        if (bytes.length > Json.MAX_DOCUMENT_BYTES) {
            throw new CliException(CliException.REJECTED, "the input is larger than 1 MiB, the most a document may be");
        }
        return bytes;
    }
}
