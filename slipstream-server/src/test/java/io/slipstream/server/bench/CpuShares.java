package io.slipstream.server.bench;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The CPU time this process spent between two moments, by what its threads do: the API's request threads, the
 * benchmark's own clients, the control loop, runs stepped, the executor, and the JVM's own (garbage collection,
 * compilation: the process's time that no Java thread accounts for; of it, the collector's pauses). On a machine whose cores all are busy, CPU per
 * run is the figure that one build can be compared by with another: throughput and latency are the noisy neighbours'.
 */
final class CpuShares {
    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();
    private final long processNanos;
    private final long gcMillis;
    private final Map<Long, Long> threadNanos;
    private final Map<Long, String> names;

    private CpuShares(long processNanos, long gcMillis, Map<Long, Long> threadNanos, Map<Long, String> names) {
        this.processNanos = processNanos;
        this.gcMillis = gcMillis;
        this.threadNanos = threadNanos;
        this.names = names;
    }

    static CpuShares now() {
        Map<Long, Long> nanos = new HashMap<>();
        Map<Long, String> names = new HashMap<>();
        for (ThreadInfo info : THREADS.getThreadInfo(THREADS.getAllThreadIds())) {
            if (info != null) {
                long cpu = THREADS.getThreadCpuTime(info.getThreadId());
                if (cpu >= 0) {
                    nanos.put(info.getThreadId(), cpu);
                    names.put(info.getThreadId(), info.getThreadName());
                }
            }
        }
        long process = ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean()).getProcessCpuTime();
        long gc = ManagementFactory.getGarbageCollectorMXBeans().stream().mapToLong(bean -> Math.max(0, bean.getCollectionTime())).sum();
        return new CpuShares(process, gc, nanos, names);
    }

    /** Milliseconds of CPU per run from {@code before} to this moment, in all and by what the threads do. */
    Map<String, Double> perRunSince(CpuShares before, long runs) {
        Map<String, Double> millis = new LinkedHashMap<>();
        for (String group : new String[] {"all", "api", "clients", "control", "steps", "executor", "jvm", "gcPauses", "other"}) {
            millis.put(group, 0.0);
        }
        double javaThreads = 0;
        for (Map.Entry<Long, Long> thread : threadNanos.entrySet()) {
            long spent = thread.getValue() - before.threadNanos.getOrDefault(thread.getKey(), 0L);
            javaThreads += spent;
            millis.merge(group(names.get(thread.getKey())), spent / 1e6, Double::sum);
        }
        double all = (processNanos - before.processNanos) / 1e6;
        millis.put("all", all);
        millis.put("jvm", Math.max(0, all - javaThreads / 1e6));
        millis.put("gcPauses", (double) (gcMillis - before.gcMillis)); // wall time; the serial collector's is its CPU time
        millis.replaceAll((group, total) -> runs == 0 ? null : Math.round(total / runs * 100) / 100.0);
        return millis;
    }

    private static String group(String thread) {
        if (thread.startsWith("JettyServerThreadPool") || thread.startsWith("Jetty")) {
            return "api";
        }
        if (thread.startsWith("pool-") || thread.startsWith("HttpClient") || thread.startsWith("ForkJoinPool") || thread.startsWith("churn")
                || thread.startsWith("scale") || thread.equals("main")) {
            return "clients";
        }
        if (thread.equals("slipstream-control")) {
            return "control";
        }
        if (thread.equals("slipstream-steps")) {
            return "steps";
        }
        if (thread.startsWith("simulated")) {
            return "executor";
        }
        return "other";
    }
}
