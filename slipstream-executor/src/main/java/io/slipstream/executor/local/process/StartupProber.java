package io.slipstream.executor.local.process;

import io.slipstream.api.codec.Json;
import io.slipstream.api.run.InstanceId;
import io.slipstream.executor.InstanceReport;
import io.slipstream.executor.local.files.InstanceDirectory;
import io.slipstream.executor.local.files.Redirects;
import java.io.IOException;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * Runs instances' startup probes: the probe command, in the instance's environment, directory and uid, every
 * period until it exits 0 (then the instance is ready) or has failed {@code failureThreshold} times in a row. What a
 * probe needs is kept in the instance's directory ({@code probe.json}, readable by the server only) and readiness as
 * a {@code ready} file, so a restarted server goes on probing, or reports the instance ready again.
 */
public final class StartupProber {
    /**
     * A probe as kept on disk: everything needed to run it again after a restart.
     *
     * @param oomScoreAdj the instance's OOM score, which the probe takes too ({@code null}: the server's, as a probe saved
     *                    before probes joined their instance kept)
     * @param cgroupProcs the {@code cgroup.procs} files of the instance's cgroup, which the probe joins as root before
     *                    anything else: it is the job's command as much as the instance's, and is held to the same limits
     *                    (memory, CPU, processes, GPUs) and killed with it; none without a cgroup
     * @param deviceCover the GPUs it is fenced from as the instance is ({@link DeviceCover#argument()}); "" or {@code null}
     *                    for none
     */
    @com.fasterxml.jackson.annotation.JsonIgnoreProperties(ignoreUnknown = true) // older files kept the environment too
    public record Probe(List<String> command, int periodSeconds, int failureThreshold, int initialDelaySeconds, String workingDir, Integer uid,
                 Integer gid, Integer maxProcesses, String network, String sandbox, Integer oomScoreAdj, List<String> cgroupProcs,
                 String deviceCover) {
        public Probe {
            cgroupProcs = cgroupProcs == null ? List.of() : List.copyOf(cgroupProcs);
            deviceCover = deviceCover == null ? "" : deviceCover;
        }

        /** A probe of an instance on this machine's network, without an image, a cgroup or an OOM score of its own. */
        Probe(List<String> command, int periodSeconds, int failureThreshold, int initialDelaySeconds, String workingDir, Integer uid, Integer gid,
              Integer maxProcesses) {
            this(command, periodSeconds, failureThreshold, initialDelaySeconds, workingDir, uid, gid, maxProcesses, null, null, null, List.of(), "");
        }
    }

    private final ScheduledExecutorService timers;
    private final ExecutorService workers;
    private final Clock clock;
    private volatile Consumer<InstanceReport> report;
    private final Guard guard;
    /** Per instance, the probe chain of its current launch: a try of any other chain does nothing. */
    private final java.util.concurrent.ConcurrentHashMap<InstanceId, Object> chains = new java.util.concurrent.ConcurrentHashMap<>();

    /** Starts a probe only while its instance is watched, under its run's lock (so no probe starts once the run is over). */
    public interface Guard {
        /** {@code start}'s result, or {@code null} without calling it if the instance is not watched any more. */
        <T> T whileWatched(InstanceId id, java.util.function.Supplier<T> start);
    }

    public StartupProber(ScheduledExecutorService timers, ExecutorService workers, Clock clock, Consumer<InstanceReport> report, Guard guard) {
        this.timers = timers;
        this.workers = workers;
        this.clock = clock;
        this.report = report;
        this.guard = guard;
    }

    public static void save(InstanceDirectory dir, Probe probe) throws IOException {
        dir.writeProbe(Json.mapper().writeValueAsBytes(probe));
    }

    public static Probe load(InstanceDirectory dir) {
        try {
            byte[] data = dir.probe();
            return data == null ? null : Json.mapper().readValue(data, Probe.class);
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    /**
     * Probes until ready, failed, or the instance is gone.
     *
     * @param firstDelaySeconds before the first try (the probe's initial delay at launch; none after a restart)
     */
    public void start(InstanceId id, InstanceDirectory dir, Probe probe, int firstDelaySeconds) {
        Object chain = new Object();
        chains.put(id, chain);
        schedule(id, chain, dir, probe, firstDelaySeconds, 0);
    }

    /**
     * The instance's current launch is over (or is being replaced by a restart in place): its probe tries no more. The
     * id alone cannot tell: a rank restarted in place is watched again under the same id, in a directory of the same name.
     */
    public void stop(InstanceId id) {
        chains.remove(id);
    }

    private void schedule(InstanceId id, Object chain, InstanceDirectory dir, Probe probe, long delaySeconds, int failures) {
        try {
            timers.schedule(() -> workers.execute(() -> attempt(id, chain, dir, probe, failures)), delaySeconds, TimeUnit.SECONDS);
        } catch (java.util.concurrent.RejectedExecutionException e) {
            // shutting down: a restarted server probes again
        }
    }

    /** Whether {@code chain} still probes the instance's current launch (and the instance is watched). */
    private boolean current(InstanceId id, Object chain) {
        return chains.get(id) == chain;
    }

    private void attempt(InstanceId id, Object chain, InstanceDirectory dir, Probe probe, int failures) {
        Started started = guard.whileWatched(id, () -> current(id, chain) ? start(dir, probe) : null);
        if (started == null) {
            return; // the instance is gone, or this chain's launch is (a restart in place probes anew)
        }
        int exit = started.exitCode(probe);
        if (guard.whileWatched(id, () -> current(id, chain) ? Boolean.TRUE : null) == null) {
            return;
        }
        if (exit == 0) {
            try {
                dir.markReady(clock.instant());
            } catch (IOException e) {
                // reported anyway; after a restart it is probed again
            }
            report.accept(new InstanceReport.Ready(id, clock.instant()));
            return;
        }
        int failed = failures + 1;
        if (failed >= probe.failureThreshold()) {
            report.accept(new InstanceReport.ProbeFailed(id, "startup probe failed " + failed + " time(s) in a row (last exit code " + exit + ")",
                    clock.instant()));
            return;
        }
        schedule(id, chain, dir, probe, probe.periodSeconds(), failed);
    }

    /** A try that was started, or could not be (its exit code then says why, as a shell's would). */
    private record Started(Process process, int failedToStart) {
        /** Its exit code, once it ended; killed (with everything it started) if it takes longer than a period. */
        int exitCode(Probe probe) {
            if (process == null) {
                return failedToStart;
            }
            try {
                if (!process.waitFor(probe.periodSeconds() + 5L, TimeUnit.SECONDS)) {
                    process.descendants().forEach(ProcessHandle::destroyForcibly);
                    process.destroyForcibly();
                    return 137;
                }
                return process.exitValue();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return 130;
            }
        }
    }

    /**
     * Starts one try. It starts in the instance's control directory, with nothing of the job's environment, and takes
     * on the instance's environment and working directory only once it runs as the instance's uid: the server never
     * follows a path of the workload's, nor runs with its environment.
     */
    private static Started start(InstanceDirectory dir, Probe probe) {
        List<String> argv = new ArrayList<>();
        if (probe.oomScoreAdj() != null || !probe.cgroupProcs().isEmpty()) {
            // As root, before anything of the probe runs: the instance's OOM score and cgroup, as its first process took them.
            argv.addAll(List.of("sh", "-c", Supervisor.JOIN, "sh", probe.oomScoreAdj() == null ? "" : probe.oomScoreAdj().toString(),
                    String.join(":", probe.cgroupProcs())));
        }
        argv.add("setsid");
        int processes = probe.maxProcesses() == null ? 4096 : probe.maxProcesses();
        List<String> asInstance = probe.uid() == null ? List.of() : List.of("setpriv", "--reuid=" + probe.uid(), "--regid=" + probe.uid(),
                probe.gid() == null ? "--clear-groups" : "--groups=" + probe.gid(), "--no-new-privs", "--pdeathsig", "KILL", "--");
        if (probe.sandbox() != null) {
            // In a sandbox of the instance's image with its mounts and network (image.Sandbox), its own PID namespace:
            // killing bubblewrap when time is up kills all of it (--die-with-parent).
            if (probe.uid() != null) {
                argv.addAll(List.of("prlimit", "--nproc=" + processes + ":" + processes, "--"));
            }
            argv.addAll(List.of("timeout", "-s", "KILL", probe.periodSeconds() + "s", "sh", "-c", "exec 3<\"$0\" && exec \"$@\"", probe.sandbox()));
            if (probe.network() != null) {
                argv.addAll(List.of("nsenter", "--net=" + probe.network(), "--"));
            }
            argv.addAll(asInstance);
            argv.addAll(List.of("bwrap", "--args", "3", "--"));
            argv.addAll(probe.command());
        } else {
            if (probe.uid() != null) {
                // As the instance: capped in processes, in a PID namespace of its own (timeout its init: all of it ends with it).
                argv.addAll(List.of("prlimit", "--nproc=" + processes + ":" + processes, "--", "unshare", "--pid", "--fork", "--kill-child"));
                if (!probe.deviceCover().isEmpty()) {
                    // Fenced from the GPUs the instance is fenced from, in a mount namespace of its own.
                    argv.addAll(List.of("--mount-proc", "--", "sh", "-c", DeviceCover.COVER, probe.deviceCover()));
                } else {
                    argv.add("--");
                }
            }
            if (probe.network() != null) {
                argv.addAll(List.of("nsenter", "--net=" + probe.network(), "--"));
            }
            argv.addAll(asInstance);
            argv.addAll(List.of("sh", "-c", Supervisor.ENTER, dir.environmentFile().toString(), probe.workingDir()));
            // timeout runs the probe in a process group of its own and signals the whole group when time is up.
            argv.addAll(List.of("timeout", "-s", "KILL", probe.periodSeconds() + "s"));
            argv.addAll(probe.command());
        }
        ProcessBuilder builder = Redirects.startInControlDirectory(new ProcessBuilder(argv), dir.path())
                .redirectInput(Redirects.NO_INPUT)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                .redirectError(ProcessBuilder.Redirect.DISCARD);
        builder.environment().clear();
        builder.environment().putAll(Supervisor.ENVIRONMENT);
        try {
            return new Started(builder.start(), 0);
        } catch (IOException e) {
            return new Started(null, 127);
        }
    }
}
