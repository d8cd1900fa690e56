package io.slipstream.cli.command;

import io.slipstream.api.problem.InvalidInputException;
import io.slipstream.cli.CliException;
import io.slipstream.server.SlipstreamServer;
import io.slipstream.server.StoreWatermark;
import io.slipstream.server.config.ConfigReader;
import io.slipstream.server.config.Plugins;
import io.slipstream.server.config.ServerConfig;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

@Command(name = "server", description = "Start the control plane: embedded store and local executor unless configured otherwise.")
public final class ServerCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Option(names = "--data-dir", paramLabel = "DIR", defaultValue = ".slipstream", description = "Where state lives (default: ${DEFAULT-VALUE}).")
    Path dataDir;

    @Option(names = "--port", paramLabel = "PORT", description = "Port to listen on; 0 picks a free one (default: 8080, or the config file's).")
    Integer port;

    @Option(names = "--config", paramLabel = "FILE", description = "YAML config file (see docs/configuration.md).")
    Path configFile;

    @Option(names = "--store-url", paramLabel = "JDBC_URL",
            description = "Use this database instead of the embedded one, e.g. jdbc:postgresql://db:5432/slipstream "
                    + "(user and password from the config file or $SLIPSTREAM_STORE_USER / $SLIPSTREAM_STORE_PASSWORD).")
    String storeUrl;

    @Option(names = "--accept-older-store",
            description = "Start on a store that holds fewer writes than this data directory has seen (truncated, or an older copy), "
                    + "accepting what it lost; prefer 'slipstream store restore' (see docs/operations.md).")
    boolean acceptOlderStore;

    @Override
    public Integer call() throws Exception {
        ServerConfig config = config();
        if (acceptOlderStore) {
            StoreWatermark.acceptOlderStore(config.dataDir().toAbsolutePath().normalize());
            spec.commandLine().getErr().println("warning: --accept-older-store: the store is taken as it is; what it lost is lost");
            spec.commandLine().getErr().flush();
        }
        SlipstreamServer server;
        try {
            server = SlipstreamServer.start(config, SlipstreamServer.systemClock());
        } catch (RuntimeException e) {
            if (acceptOlderStore) {
                StoreWatermark.accepted(config.dataDir().toAbsolutePath().normalize()); // for this start only, not a later one
            }
            throw new CliException(CliException.RUN_FAILED, "cannot start the server: " + rootMessage(e));
        }
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            server.close();
            stopped.countDown();
        }, "slipstream-shutdown"));
        var out = spec.commandLine().getOut();
        out.println("Slipstream listening on " + server.url());
        out.println("  data:        " + config.dataDir().toAbsolutePath().normalize());
        out.println("  admin token: " + server.adminTokenFile());
        var nodes = server.nodes();
        out.println("  nodes:       " + nodes.size() + (nodes.isEmpty() ? "" : " (" + nodes.get(0).name() + " ...)"));
        out.flush();
        stopped.await();
        return 0;
    }

    ServerConfig config() throws IOException {
        ServerConfig config = ConfigReader.defaults(dataDir);
        byte[] file = null;
        if (configFile != null) {
            if (!Files.isRegularFile(configFile)) {
                throw new CliException(CliException.REJECTED, "--config: no such file: " + configFile);
            }
            file = Files.readAllBytes(configFile);
        }
        Map<String, String> overrides = new LinkedHashMap<>();
        if (storeUrl != null) {
            // Read by the store the URL names, like the config file's store.url; user and password from the environment,
            // else from the config file.
            overrides.put("store.url", storeUrl);
            putIfSet(overrides, "store.username", System.getenv("SLIPSTREAM_STORE_USER"));
            putIfSet(overrides, "store.password", System.getenv("SLIPSTREAM_STORE_PASSWORD"));
        }
        try {
            config = file == null && overrides.isEmpty() ? config
                    : ConfigReader.read(file, config, overrides, Plugins.installed());
        } catch (InvalidInputException e) {
            if (storeUrl != null && e.problems().stream().anyMatch(p -> p.field().equals("store.url"))) {
                String why = e.problems().stream().filter(p -> p.field().equals("store.url")).findFirst().orElseThrow().message();
                throw new CliException(CliException.REJECTED, "--store-url: " + why);
            }
            throw e;
        }
        if (port != null) {
            if (port < 0 || port > 65_535) {
                throw new CliException(CliException.REJECTED, "--port: must be between 0 and 65535");
            }
            config = config.withPort(port);
        }
        return config;
    }

    private static void putIfSet(Map<String, String> overrides, String field, String value) {
        if (value != null && !value.isBlank()) {
            overrides.put(field, value);
        }
    }

    static String rootMessage(Throwable e) {
        Throwable cause = e;
        while (cause.getCause() != null && cause.getCause() != cause) {
            cause = cause.getCause();
        }
        String message = cause.getMessage() == null ? cause.getClass().getSimpleName() : cause.getMessage();
        if (message.contains("Database may be already in use") || message.contains("Locked by another process")) {
            return "the data directory is in use by another Slipstream server";
        }
        if (cause instanceof java.net.BindException) {
            return "the port is in use (" + message + "); pick another with --port";
        }
        return message.lines().findFirst().orElse(message);
    }
}
