package io.slipstream.cli;

import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** How a command reaches the server: address and token, from options, the environment, or the local data dir. */
public final class ClientOptions {
    /**
     * Where a server keeps its admin token in its data directory ({@code SlipstreamServer.ADMIN_TOKEN_FILE}; the client
     * knows the name, not the server: {@code AdminTokenFileTest} holds the two together).
     */
    public static final String ADMIN_TOKEN_FILE = "admin.token";

    @Option(names = "--server", paramLabel = "URL",
            description = "Server address (default: $SLIPSTREAM_SERVER or http://127.0.0.1:8080).")
    String server;

    @Option(names = "--token", paramLabel = "TOKEN",
            description = "API token (default: $SLIPSTREAM_TOKEN, else the admin token in the data dir).")
    String token;

    @Option(names = "--data-dir", paramLabel = "DIR",
            description = "Where to look for admin.token when no token is given (default: $SLIPSTREAM_DATA_DIR or ./.slipstream).")
    Path dataDir;

    /** The command this is mixed into: what the client tells the user (warnings, waiting) goes to its stderr. */
    @Spec(Spec.Target.MIXEE)
    CommandSpec mixee;

    public ApiClient client() {
        String address = firstNonBlank(server, System.getenv("SLIPSTREAM_SERVER"), "http://127.0.0.1:8080");
        URI uri;
        try {
            uri = URI.create(address.endsWith("/") ? address.substring(0, address.length() - 1) : address);
            if (uri.getScheme() == null || uri.getHost() == null) {
                throw new IllegalArgumentException();
            }
        } catch (IllegalArgumentException e) {
            throw new CliException(CliException.REJECTED, "--server: '" + address + "' is not a URL like http://127.0.0.1:8080");
        }
        if (mixee == null) {
            return new ApiClient(uri, resolveToken());
        }
        return new ApiClient(uri, resolveToken(), line -> {
            java.io.PrintWriter err = mixee.commandLine().getErr();
            err.println(line);
            err.flush();
        });
    }

    private String resolveToken() {
        String explicit = firstNonBlank(token, System.getenv("SLIPSTREAM_TOKEN"), null);
        if (explicit != null) {
            return explicit.trim();
        }
        Path dir = dataDir != null ? dataDir : Path.of(firstNonBlank(System.getenv("SLIPSTREAM_DATA_DIR"), null, ".slipstream"));
        Path file = dir.resolve(ADMIN_TOKEN_FILE);
        try {
            return Files.isReadable(file) ? Files.readString(file, StandardCharsets.UTF_8).trim() : null;
        } catch (IOException e) {
            return null;
        }
    }

    private static String firstNonBlank(String a, String b, String fallback) {
        if (a != null && !a.isBlank()) {
            return a;
        }
        if (b != null && !b.isBlank()) {
            return b;
        }
        return fallback;
    }
}
