package io.slipstream.cli.command;

import io.slipstream.api.run.RunState;
import io.slipstream.api.run.WaitReason;
import io.slipstream.api.spec.Quantities;
import io.slipstream.api.wire.InstanceView;
import io.slipstream.api.wire.RunView;
import io.slipstream.cli.ApiClient;
import io.slipstream.cli.Output;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import tools.jackson.databind.JsonNode;

/** Shared by the commands that show or wait for runs. */
final class Runs {
    private Runs() {
    }

    static RunView get(ApiClient api, String id) {
        return ApiClient.read(api.get("/api/v1/runs/" + encode(id)), RunView.class);
    }

    static String encode(String segment) {
        return java.net.URLEncoder.encode(segment, java.nio.charset.StandardCharsets.UTF_8).replace("+", "%20");
    }

    /**
     * Polls the run until it is final, printing on {@code progress} a line each time what {@link #statusLine} shows
     * changes (state, reason, instances, reported step); the final state is left to the caller, so that it is
     * printed once.
     */
    static RunView await(ApiClient api, String id, PrintWriter progress) {
        return follow(() -> get(api, id), progress, Watch.SLEEP);
    }

    /**
     * As {@link #await(ApiClient, String, PrintWriter)}, but also ends as soon as the run cannot start as things stand
     * ({@link #cannotStart}), or once {@code deadline} ({@code null}: none) passed: {@code --wait} of a run just made.
     */
    static RunView awaitWhileItCouldStart(ApiClient api, String id, PrintWriter progress, java.time.Instant deadline) {
        return follow(() -> get(api, id), progress, Watch.SLEEP,
                run -> cannotStart(run) || deadline != null && java.time.Instant.now().isAfter(deadline));
    }

    static RunView follow(java.util.function.Supplier<RunView> poll, PrintWriter progress, Watch.Pause pause) {
        return follow(poll, progress, pause, run -> false);
    }

    /** Until the run is final or {@code giveUp} says to stop waiting for it. */
    static RunView follow(java.util.function.Supplier<RunView> poll, PrintWriter progress, Watch.Pause pause,
                          java.util.function.Predicate<RunView> giveUp) {
        return Watch.run(poll, run -> {
            String line = statusLine(run);
            boolean done = run.state().isFinal() || giveUp.test(run);
            return new Watch.Frame(done ? "" : line + "\n", line, done);
        }, progress, java.time.Duration.ofMillis(50), java.time.Duration.ofMillis(500), pause);
    }

    /**
     * Whether a queued run waits for someone to change something (its quota, the nodes, its job) rather than for other
     * runs to end ({@link WaitReason#waitsForAChange}): as things stand it never starts.
     */
    static boolean cannotStart(RunView run) {
        if (run.state().isFinal() || run.queue() == null) {
            return false;
        }
        try {
            return WaitReason.valueOf(run.queue().reason()).waitsForAChange();
        } catch (IllegalArgumentException | NullPointerException e) {
            return false; // a reason a newer server gave: keep waiting
        }
    }

    /** {@code run ID: RUNNING (Started) 2 running, step 120}: one line of a run's progress. */
    static String statusLine(RunView run) {
        String counts = counts(run);
        RunView.ProgressView progress = run.progress();
        return "run " + run.id() + ": " + run.state() + " (" + run.reason() + ")"
                + (run.queue() != null ? " - " + run.queue().message() : "")
                + (counts.isEmpty() ? "" : ", " + counts)
                + (progress != null && progress.step() != null ? ", step " + progress.step() : "")
                + (progress != null && progress.checkpointStep() != null ? ", checkpoint of step " + progress.checkpointStep() : "");
    }

    /** {@code 2/4 running}: how many instances of the current attempt run, of how many. */
    static String counts(RunView run) {
        List<InstanceView> current = run.instances().stream().filter(i -> i.attempt() == run.attempt()).toList();
        if (current.isEmpty()) {
            return "";
        }
        Map<String, Integer> byState = new TreeMap<>();
        current.forEach(i -> byState.merge(i.state().name().toLowerCase(java.util.Locale.ROOT), 1, Integer::sum));
        StringBuilder text = new StringBuilder();
        byState.forEach((state, count) -> text.append(text.length() == 0 ? "" : ", ").append(count).append(' ').append(state));
        return text.toString();
    }

    /** Where the run's resources are: an elastic run's instances each stand on their own ({@code 2 InQuota + 6 NotInQuota}). */
    static String resources(RunView run) {
        if (run.realTimeResources() == null) {
            return "";
        }
        RunView.WorldView world = run.world();
        if (world == null || world.inQuota() == 0 || world.notInQuota() == 0) {
            return run.realTimeResources().name();
        }
        return world.inQuota() + " InQuota + " + world.notInQuota() + " NotInQuota";
    }

    static List<String> row(RunView run) {
        return List.of(run.id(), run.job(), run.workspace(), run.state().name(), resources(run), counts(run),
                Output.age(run.createdAt(), null), run.queue() != null ? run.queue().reason() : run.reason());
    }

    static final List<String> HEADER = List.of("ID", "JOB", "WORKSPACE", "STATE", "RESOURCES", "INSTANCES", "AGE", "REASON");

    static final List<String> WIDE_HEADER;

    static {
        List<String> wide = new ArrayList<>(HEADER);
        wide.addAll(List.of("PRIORITY", "ATTEMPT", "NODES", "STEP", "QUOTA", "LABELS"));
        WIDE_HEADER = List.copyOf(wide);
    }

    /** The row, and for {@code -o wide}: priority, attempt, the nodes of the current attempt, the reported step, the quota, the labels. */
    static List<String> wideRow(RunView run) {
        List<String> row = new ArrayList<>(row(run));
        String nodes = run.instances().stream().filter(i -> i.attempt() == run.attempt() && i.node() != null).map(InstanceView::node)
                .distinct().sorted().collect(java.util.stream.Collectors.joining(","));
        row.addAll(List.of(Integer.toString(run.priority()), Integer.toString(run.attempt()), nodes,
                run.progress() == null || run.progress().step() == null ? "" : run.progress().step().toString(),
                run.quota() == null ? "" : run.quota(), io.slipstream.api.label.Labels.format(run.labels())));
        return row;
    }

    /** {@code  (restarts: 1 failure, 2 preemptions)}, or nothing. */
    static String restarts(RunView.RestartsView restarts) {
        if (restarts == null) {
            return "";
        }
        List<String> parts = new ArrayList<>();
        add(parts, restarts.failures(), "failure");
        add(parts, restarts.preemptions(), "preemption");
        add(parts, restarts.nodeLost(), "lost node");
        add(parts, restarts.hangs(), "hang");
        String text = parts.isEmpty() ? "" : " (restarts: " + String.join(", ", parts) + ")";
        return restarts.retryAt() == null ? text : text + "; next attempt not before " + restarts.retryAt();
    }

    private static void add(List<String> parts, int count, String what) {
        if (count > 0) {
            parts.add(count + " " + what + (count == 1 ? "" : "s"));
        }
    }

    static void describe(PrintWriter out, RunView run) {
        out.println("Run:        " + run.id());
        out.println("Job:        " + run.workspace() + "/" + run.job() + " (version " + run.jobVersion() + ")");
        out.println("State:      " + run.state() + " (" + run.reason() + ")");
        if (run.queue() != null) {
            out.println("Queue:      position " + run.queue().position() + ", " + run.queue().reason() + ": " + run.queue().message());
        }
        out.println("Quota:      " + (run.quota() == null ? "(none: it may only borrow what no quota guarantees)" : run.workspace() + "/" + run.quota()));
        if (run.realTimeResources() != null && run.world() != null) {
            out.println("Resources:  " + run.world().inQuota() + " InQuota + " + run.world().notInQuota() + " NotInQuota instance(s)");
        } else if (run.realTimeResources() != null) {
            out.println("Resources:  " + run.realTimeResources()
                    + (run.realTimeResources().name().equals("InQuota") ? " (its quota's guarantee)" : " (idle capacity: may be reclaimed)"));
        }
        if (run.world() != null) {
            RunView.WorldView world = run.world();
            out.println("World:      " + world.size() + " instance(s) of " + world.minimum() + " to " + world.maximum() + ", world " + world.version()
                    + (world.changing() ? " (changing: the world before is stopping)" : ""));
        }
        out.println("Attempt:    " + run.attempt() + restarts(run.restarts()));
        RunView.ProgressView progress = run.progress();
        if (progress != null && (progress.step() != null || progress.workLostSeconds() > 0)) {
            out.println("Progress:   " + (progress.step() == null ? "none reported" : "step " + progress.step())
                    + (progress.checkpointStep() == null ? "" : ", checkpoint of step " + progress.checkpointStep())
                    + String.format(java.util.Locale.ROOT, ", work lost %.1f instance-seconds", progress.workLostSeconds()));
        }
        out.println("Priority:   " + run.priority());
        out.println("Labels:     " + io.slipstream.api.label.Labels.format(run.labels()));
        if (run.overrides() != null && !run.overrides().isEmpty()) {
            out.println("Overrides:  " + run.overrides().entrySet().stream().map(e -> e.getKey() + "=" + e.getValue())
                    .collect(java.util.stream.Collectors.joining(" ")));
        }
        if (run.scheduleTime() != null) {
            out.println("Scheduled:  for " + run.scheduleTime());
        }
        out.println("Created:    " + run.createdAt() + (run.submittedBy() != null ? " by " + run.submittedBy()
                : run.scheduleTime() != null ? " by its schedule" : ""));
        if (run.cancelRequestedAt() != null && !run.state().isFinal()) {
            out.println("Cancel:     requested at " + run.cancelRequestedAt() + "; waiting for every process to stop");
        }
        if (run.startedAt() != null) {
            out.println("Started:    " + run.startedAt());
        }
        if (run.finishedAt() != null) {
            out.println("Finished:   " + run.finishedAt() + " (ran " + Output.age(run.startedAt() != null ? run.startedAt() : run.createdAt(), run.finishedAt()) + ")");
        }
        if (run.nodeGroups() != null && run.nodeGroups().size() > 1) {
            out.println("Groups:");
            List<List<String>> groupRows = new ArrayList<>();
            for (RunView.NodeGroupView group : run.nodeGroups()) {
                groupRows.add(List.of("  " + group.name(), (group.minReplicas() != null ? group.minReplicas() + " to " : "") + group.replicas()
                                + (group.minReplicas() != null ? "" : " (" + group.minSuccessReplicas() + " must succeed)"),
                        Integer.toString(group.pending()), Integer.toString(group.starting()), Integer.toString(group.running()),
                        Integer.toString(group.succeeded()), Integer.toString(group.failed()), Integer.toString(group.stopped())));
            }
            Output.table(out, List.of("  GROUP", "REPLICAS", "PENDING", "STARTING", "RUNNING", "SUCCEEDED", "FAILED", "STOPPED"), groupRows);
        }
        if (!run.instances().isEmpty()) {
            out.println("Instances:");
            // What ended instances used, where their executor measured it: the columns are there once one has a figure.
            boolean measured = run.instances().stream().anyMatch(i -> i.memoryPeak() != null || i.cpuSeconds() != null);
            List<List<String>> rows = new ArrayList<>();
            for (InstanceView instance : run.instances()) {
                List<String> row = new ArrayList<>(List.of("  " + instance.nodeGroup() + "-" + instance.groupRank(), Integer.toString(instance.rank()),
                        Integer.toString(instance.attempt()), instance.node(),
                        instance.gpus().isEmpty() ? "" : instance.gpus().toString().replace(" ", ""), instance.state().name(),
                        exit(instance), Integer.toString(instance.restarts())));
                if (measured) {
                    row.addAll(List.of(memory(instance.memoryPeak()), cpuTime(instance.cpuSeconds())));
                }
                row.add(instance.reason() == null ? "" : instance.reason());
                rows.add(row);
            }
            List<String> header = new ArrayList<>(List.of("  NAME", "RANK", "ATTEMPT", "NODE", "GPUS", "STATE", "EXIT", "RESTARTS"));
            if (measured) {
                header.addAll(List.of("PEAK MEM", "CPU"));
            }
            header.add("REASON");
            Output.table(out, header, rows);
        }
        out.flush();
    }

    /** {@code 137 (OOMKilled)}: the exit code, with its end cause where the executor knew one; empty before an exit. */
    static String exit(InstanceView instance) {
        String code = instance.exitCode() == null ? "" : instance.exitCode().toString();
        return instance.endCause() == null ? code : (code + " (" + instance.endCause() + ")").strip();
    }

    /** A memory quantity as people read it ({@code 1.5Gi}, {@code 812Mi}); empty where not measured. */
    static String memory(String quantity) {
        if (quantity == null) {
            return "";
        }
        long bytes;
        try {
            bytes = Quantities.parseBytes(quantity);
        } catch (IllegalArgumentException e) {
            return quantity; // a server's form this client does not know: as it came
        }
        if (bytes >= 1L << 30) {
            return String.format(Locale.ROOT, "%.1fGi", bytes / (double) (1L << 30));
        }
        if (bytes >= 1L << 20) {
            return String.format(Locale.ROOT, "%.0fMi", bytes / (double) (1L << 20));
        }
        return bytes >= 1L << 10 ? String.format(Locale.ROOT, "%.0fKi", bytes / 1024.0) : Long.toString(bytes);
    }

    /** CPU time as people read it ({@code 0.4s}, {@code 12m05s}, {@code 3h20m}); empty where not measured. */
    static String cpuTime(Double seconds) {
        if (seconds == null) {
            return "";
        }
        if (seconds < 60) {
            return String.format(Locale.ROOT, "%.1fs", seconds);
        }
        long whole = Math.round(seconds);
        return whole < 3600 ? String.format(Locale.ROOT, "%dm%02ds", whole / 60, whole % 60)
                : String.format(Locale.ROOT, "%dh%02dm", whole / 3600, whole % 3600 / 60);
    }

    static boolean succeeded(RunView run) {
        return run.state() == RunState.SUCCEEDED;
    }

    static Duration elapsed(RunView run) {
        return run.finishedAt() == null ? Duration.ZERO : Duration.between(run.createdAt(), run.finishedAt());
    }

    static JsonNode node(ApiClient api, String id) {
        return api.get("/api/v1/runs/" + encode(id));
    }
}
