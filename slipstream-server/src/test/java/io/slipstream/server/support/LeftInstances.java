package io.slipstream.server.support;

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
 * and the CI refuses a build that leaves processes behind. Not at each server's close: tests restart servers over
 * the same data dir and expect their instances to be there. What it kills is written to
 * {@code target/processes-left-by-test-servers.txt}, which {@code .ci/run} refuses as it refuses the processes
 * themselves: a server that leaves what it should have stopped still fails the build.
 */
final class LeftInstances {
    private static final Set<String> DATA_DIRS = ConcurrentHashMap.newKeySet();

    static {
        Runtime.getRuntime().addShutdownHook(new Thread(() -> kill(DATA_DIRS), "kill-left-instances"));
    }

    private LeftInstances() {
    }

    static void watch(Path dataDir) {
        DATA_DIRS.add(dataDir.toAbsolutePath().normalize() + "/");
    }

    /**
     * Kills every process whose command line names a path under one of {@code dataDirs} (each ends with "/"; the
     * supervisors and launchers name their instance directory), with all their descendants (the workloads, which name
     * nothing of it).
     */
    static void kill(Set<String> dataDirs) {
        List<ProcessHandle> left = new ArrayList<>();
        ProcessHandle.allProcesses().forEach(process -> {
            String line = process.info().commandLine().orElse("");
            if (process.pid() != ProcessHandle.current().pid() && dataDirs.stream().anyMatch(line::contains)) {
                left.add(process);
                process.descendants().forEach(left::add);
            }
        });
        if (left.isEmpty()) {
            return;
        }
        List<String> said = left.stream().map(p -> p.pid() + ": " + p.info().commandLine().orElse("?")).toList();
        System.err.println("killed " + left.size() + " process(es) that test servers left running:\n  " + String.join("\n  ", said));
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
