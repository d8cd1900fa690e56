package io.slipstream.executor.local;

import io.slipstream.api.run.InstanceId;
import io.slipstream.executor.Executor;
import io.slipstream.executor.InstanceReport;
import io.slipstream.executor.LogStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/** What the cgroup suites wait for, each with a deadline: an instance's report, or a line in its output. */
final class InstanceWaits {
    private final LinkedBlockingQueue<InstanceReport> reports = new LinkedBlockingQueue<>();
    private final Duration deadline;

    InstanceWaits(Duration deadline) {
        this.deadline = deadline;
    }

    /** The executor's listener. */
    void report(InstanceReport report) {
        reports.add(report);
    }

    static String log(Executor executor, InstanceId id, Map<String, String> handle) {
        return new String(executor.readLogTail(id, handle, LogStream.STDOUT, 1 << 16).data(), StandardCharsets.UTF_8);
    }

    /** The instance's output once it holds {@code text}; failing, it says what the instance printed, stderr too. */
    String awaitOutput(Executor executor, InstanceId id, Map<String, String> handle, String text) throws InterruptedException {
        long end = System.nanoTime() + deadline.toNanos();
        while (System.nanoTime() < end) {
            String out = log(executor, id, handle);
            if (out.contains(text)) {
                return out;
            }
            TimeUnit.MILLISECONDS.sleep(50);
        }
        throw new AssertionError("no '" + text + "' from " + id + " within " + deadline + ": " + log(executor, id, handle)
                + new String(executor.readLogTail(id, handle, LogStream.STDERR, 1 << 16).data(), StandardCharsets.UTF_8));
    }

    /** The instance's first report of {@code type}; the others' stay for later waits. */
    <R extends InstanceReport> R awaitReport(InstanceId id, Class<R> type) throws InterruptedException {
        long end = System.nanoTime() + deadline.toNanos();
        List<InstanceReport> others = new ArrayList<>();
        try {
            while (System.nanoTime() < end) {
                InstanceReport report = reports.poll(100, TimeUnit.MILLISECONDS);
                if (report != null && report.id().equals(id) && type.isInstance(report)) {
                    return type.cast(report);
                }
                if (report != null) {
                    others.add(report);
                }
            }
        } finally {
            reports.addAll(others); // another instance's, for a later wait
        }
        throw new AssertionError("no " + type.getSimpleName() + " for " + id + " within " + deadline);
    }
}
