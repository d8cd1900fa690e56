package io.slipstream.executor.slurm;

import java.util.HashMap;
import java.util.Map;
import java.util.Set;

/**
 * A job's state as {@code squeue} says it ({@code %T}, in full: {@code PENDING}, {@code RUNNING}, {@code COMPLETING},
 * {@code COMPLETED}, {@code NODE_FAIL}...) and why ({@code %r}: {@code Resources}, {@code None}...).
 */
record JobState(String state, String reason, String name) {
    /** The states a job ends in: nothing of it runs any more (a COMPLETING job may still have processes to kill). */
    private static final Set<String> ENDED = Set.of("COMPLETED", "CANCELLED", "FAILED", "TIMEOUT", "NODE_FAIL", "PREEMPTED", "OUT_OF_MEMORY",
            "BOOT_FAIL", "DEADLINE", "SPECIAL_EXIT", "REVOKED");
    /** The states of a job that waits to run (CONFIGURING: its node is being booted). */
    private static final Set<String> WAITING = Set.of("PENDING", "CONFIGURING", "REQUEUED", "REQUEUE_HOLD", "REQUEUE_FED", "RESV_DEL_HOLD");

    /** The fields {@link #parseAll} reads, in {@code squeue --format} syntax: '|' apart, the job's name last. */
    static final String SQUEUE_FORMAT = "%i|%T|%r|%j";
    private static final java.security.SecureRandom RANDOM = new java.security.SecureRandom();

    /**
     * A mark of one reading of the queue that begins each of its lines ({@link #format}): a job's name, any account's to
     * choose, may hold a newline and then what looks like a line of another job, never the mark of a reading that had
     * not begun when the name was given.
     */
    static String mark() {
        byte[] bytes = new byte[12];
        RANDOM.nextBytes(bytes);
        return java.util.HexFormat.of().formatHex(bytes);
    }

    /** squeue's {@code --format} of a reading marked {@code mark}: the mark, then {@link #SQUEUE_FORMAT}. */
    static String format(String mark) {
        return mark + "|" + SQUEUE_FORMAT;
    }

    /** Reads the queue: squeue with {@code arguments} (no {@code --format}), each job's state and name by id. */
    static Map<String, JobState> read(SlurmCommands commands, java.util.List<String> arguments) {
        String mark = mark();
        return parseAll(commands.run("squeue", withFormat(arguments, mark)), mark);
    }

    /** The ids of the jobs of that name that may still run, read with squeue's {@code arguments} (no {@code --format}). */
    static java.util.List<String> readLiveJobsNamed(SlurmCommands commands, java.util.List<String> arguments, String name) {
        String mark = mark();
        return liveJobsNamed(commands.run("squeue", withFormat(arguments, mark)), mark, name);
    }

    private static java.util.List<String> withFormat(java.util.List<String> arguments, String mark) {
        java.util.List<String> all = new java.util.ArrayList<>(arguments);
        all.add("--format=" + format(mark));
        return all;
    }

    JobState(String state, String reason) {
        this(state, reason, null);
    }

    /** Whether the job bears that name ({@code %j}): a job id alone may be anyone's job. */
    boolean named(String expected) {
        return expected.equals(name);
    }

    /** Whether something of the job may still run (or start). */
    boolean live() {
        return !ENDED.contains(state);
    }

    /** Whether it has not started yet. */
    boolean waiting() {
        return WAITING.contains(state);
    }

    /** Whether its processes run (or are being stopped). */
    boolean running() {
        return live() && !waiting();
    }

    /** Whether Slurm ended it because its node failed. */
    boolean nodeFailed() {
        return state.equals("NODE_FAIL");
    }

    /** Whether the kernel's OOM killer ended something of it (Slurm's cgroup saw it). */
    boolean outOfMemory() {
        return state.equals("OUT_OF_MEMORY");
    }

    @Override
    public String toString() { // what is said of it in reports: never its name
        return reason == null || reason.equals("None") ? state : state + " (" + reason + ")";
    }

    /**
     * Each job's state and name by id, from the lines of {@code squeue --format=}{@link #format}{@code (mark)}; lines not
     * understood, or not marked so (what a job's name holds after a newline), are skipped.
     */
    static Map<String, JobState> parseAll(String output, String mark) {
        Map<String, JobState> states = new HashMap<>();
        for (String[] fields : lines(output, mark)) {
            states.put(fields[0], new JobState(fields[1], fields[2], fields[3]));
        }
        return states;
    }

    /** The ids of the jobs of that name that may still run, among the lines of {@code squeue --format=}{@link #format}{@code (mark)}. */
    static java.util.List<String> liveJobsNamed(String output, String mark, String name) {
        java.util.List<String> jobs = new java.util.ArrayList<>();
        for (String[] fields : lines(output, mark)) {
            if (fields[3].equals(name) && new JobState(fields[1], fields[2]).live()) {
                jobs.add(fields[0]);
            }
        }
        return jobs;
    }

    /** The fields (id, state, reason, name) of each line that begins with the reading's mark and a job id. */
    private static java.util.List<String[]> lines(String output, String mark) {
        java.util.List<String[]> lines = new java.util.ArrayList<>();
        String start = mark + "|";
        for (String line : output.split("\n")) {
            if (line.startsWith(start)) {
                String[] fields = line.substring(start.length()).strip().split("\\|", 4);
                if (fields.length == 4 && fields[0].matches("\\d+")) {
                    lines.add(fields);
                }
            }
        }
        return lines;
    }
}
