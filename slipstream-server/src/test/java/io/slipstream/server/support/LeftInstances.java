package io.slipstream.server.support;

import java.nio.file.Path;
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
 * the same data dir and expect their instances to be there.
 */
final class LeftInstances {
    private static final Set<String> DATA_DIRS = ConcurrentHashMap.newKeySet();

    static {
        Runtime.getRuntime().addShutdownHook(new Thread(() -> kill(DATA_DIRS), "kill-left-instances"));
    }

    private LeftInstances() {
    }

    static void watch(Path dataDir) {
        DATA_DIRS.add(dataDir.toAbsolutePath().toString());
    }

    /**
     * Kills every process whose command line names one of {@code dataDirs} (the supervisors and launchers name their
     * instance directory), with all their descendants (the workloads, which name nothing of it).
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
        left.forEach(ProcessHandle::destroyForcibly);
        try {
            CompletableFuture.allOf(left.stream().map(ProcessHandle::onExit).toArray(CompletableFuture[]::new)).get(10, TimeUnit.SECONDS);
        } catch (InterruptedException | ExecutionException | TimeoutException e) {
            System.err.println("instances left by test servers may still run: " + e);
        }
    }
}
