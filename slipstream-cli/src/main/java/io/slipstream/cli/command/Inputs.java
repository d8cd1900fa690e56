package io.slipstream.cli.command;

import io.slipstream.api.codec.Json;
import io.slipstream.cli.CliException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;

/** Reads the documents a user points a command at ({@code -f FILE}, or {@code -f -} for standard input). */
final class Inputs {
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

    private static byte[] limited(InputStream in) throws IOException {
        byte[] bytes = in.readNBytes(Json.MAX_DOCUMENT_BYTES + 1);
        if (bytes.length > Json.MAX_DOCUMENT_BYTES) {
            throw new CliException(CliException.REJECTED, "the input is larger than 1 MiB, the most a document may be");
        }
        return bytes;
    }
}
