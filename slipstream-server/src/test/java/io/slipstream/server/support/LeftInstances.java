package io.slipstream.server.support;

import io.slipstream.testing.NoProcessLeftBehind;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Kills, when the test JVM exits, the instances that test servers left running. A run's instances outlive its server
 * by design (a server started again adopts them), so a test that fails before it cancels its runs would leave them,
 * and the CI refuses a build that leaves processes behind. Servers the tests left open are closed first, so that none
 * restarts what is killed. Not at each server's close: tests restart servers over
 * the same data dir and expect their instances to be there. What it kills is written to
 * {@code target/processes-left-by-test-servers.txt}, which {@code .ci/run} refuses as it refuses the processes
 * themselves: a server that leaves what it should have stopped still fails the build.
 */
final class LeftInstances {
    private static final Set<Path> DATA_DIRS = ConcurrentHashMap.newKeySet();
    private static final Set<AutoCloseable> OPEN = ConcurrentHashMap.newKeySet();

    static {
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            closeOpen(); // first: a server still running would restart what is killed (seen: a run's next attempt)
            kill(List.copyOf(DATA_DIRS));
        }, "kill-left-instances"));
    }

    private LeftInstances() {
    }

    static void watch(Path dataDir) {
        DATA_DIRS.add(dataDir.toAbsolutePath().normalize());
    }

    /** A server that a test did not close yet; {@link #closed} once it is. */
    static void opened(AutoCloseable server) {
        OPEN.add(server);
    }

    static void closed(AutoCloseable server) {
        OPEN.remove(server);
    }

    private static void closeOpen() {
        for (AutoCloseable server : List.copyOf(OPEN)) {
            try {
                server.close();
            } catch (Exception | Error e) {
                System.err.println("a test server left open did not close: " + e);
            }
        }
    }

    /**
     * Kills every process in one of {@code dataDirs} ({@link NoProcessLeftBehind#processesIn}: the supervisors and
     * launchers name their instance directory), with all their descendants (the workloads, which name nothing of it).
     */
    static void kill(List<Path> dataDirs) {
        List<ProcessHandle> left = new ArrayList<>();
        for (NoProcessLeftBehind.Left found : NoProcessLeftBehind.processesIn(dataDirs)) {
            ProcessHandle.of(found.pid()).ifPresent(process -> {
                left.add(process);
                process.descendants().forEach(left::add);
            });
        }
        if (left.isEmpty()) {
            return;
        }
        List<String> said = left.stream().distinct().map(p -> p.pid() + ": " + p.info().commandLine().orElse("?")).toList();
        System.err.println("killed " + said.size() + " process(es) that test servers left running:\n  " + String.join("\n  ", said));
        try {
            Files.write(Path.of("target", "processes-left-by-test-servers.txt"), said, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
        } catch (IOException e) {
            System.err.println("cannot record them: " + e);
        }
        left.forEach(ProcessHandle::destroyForcibly);
        try {
            CompletableFuture.allOf(left.stream().map(ProcessHandle::onExit).toArray(CompletableFuture[]::new)).get(10, TimeUnit.SECONDS);
        } catch (InterruptedException | ExecutionException | TimeoutException e) {
            System.err.println("instances left by test servers may still run: " + e);
        }
    }
}
