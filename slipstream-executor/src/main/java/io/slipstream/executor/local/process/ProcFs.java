package io.slipstream.executor.local.process;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Reads the Linux process table, and what else the executor asks the kernel, from {@code /proc}: what Java's
 * ProcessHandle does not show (groups, sessions, children, real uids, sockets). What is read here is the kernel's
 * account, not a file anyone could put there.
 */
public final class ProcFs {
    private static final Path PROC = Path.of("/proc");

    /** One line of {@code /proc/<pid>/stat}, the fields we use. */
    public record Stat(long pid, char state, long ppid, long pgrp, long session, long startTime) {
        boolean isZombie() {
            return state == 'Z' || state == 'X';
        }
    }

    private ProcFs() {
    }

    public static Optional<Stat> stat(long pid) {
        try {
            return Optional.of(parse(pid, Files.readString(PROC.resolve(Long.toString(pid)).resolve("stat"), StandardCharsets.UTF_8)));
        } catch (NoSuchFileException e) {
            return Optional.empty();
        } catch (IOException | RuntimeException e) {
            return Optional.empty();
        }
    }

    /** Parses a stat line; the command name in parentheses may itself contain spaces and parentheses. */
    static Stat parse(long pid, String line) {
        int close = line.lastIndexOf(')');
        String[] fields = line.substring(close + 2).trim().split(" ");
        // fields[0] is field 3 of proc(5): state; ppid 4, pgrp 5, session 6, starttime 22
        return new Stat(pid, fields[0].charAt(0), Long.parseLong(fields[1]), Long.parseLong(fields[2]), Long.parseLong(fields[3]),
                Long.parseLong(fields[19]));
    }

    /** Whether a process with this pid and start time is alive: guards against pid reuse. */
    public static boolean isAlive(long pid, long startTime) {
        return stat(pid).filter(s -> isLive(s) && (startTime < 0 || s.startTime() == startTime)).isPresent();
    }

    /**
     * Whether a process is alive: not a zombie, or a zombie whose main thread alone has exited while others run on
     * (its stat shows Z then, but it is very much alive).
     */
    static boolean isLive(Stat stat) {
        if (!stat.isZombie()) {
            return true;
        }
        try (DirectoryStream<Path> tasks = Files.newDirectoryStream(PROC.resolve(Long.toString(stat.pid())).resolve("task"))) {
            for (Path task : tasks) {
                String line = Files.readString(task.resolve("stat"), StandardCharsets.UTF_8);
                char state = line.charAt(line.lastIndexOf(')') + 2);
                if (state != 'Z' && state != 'X') {
                    return true;
                }
            }
        } catch (IOException | RuntimeException e) {
            return false; // gone
        }
        return false;
    }

    /**
     * The live processes that belong to an instance whose main process was {@code leader}: its session, its
     * process group, and their descendants (a child that moved to a new group still has its parent).
     */
    public static List<Long> treeOf(long leader) {
        return treeOf(leader, -1, -1);
    }

    /**
     * As {@link #treeOf(long)}, and the leader itself while it is the process that started at {@code leaderStart} and
     * the child of its {@code supervisor} (before it made its session, an instance told to stop the moment it started
     * is in neither; see Supervisor). Either unknown ({@code -1}): the leader counts only through its session or group.
     */
    static List<Long> treeOf(long leader, long leaderStart, long supervisor) {
        List<Stat> all = new ArrayList<>();
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(PROC)) {
            for (Path entry : entries) {
                String name = entry.getFileName().toString();
                if (!name.isEmpty() && Character.isDigit(name.charAt(0))) {
                    stat(Long.parseLong(name)).ifPresent(all::add);
                }
            }
        } catch (IOException e) {
            throw new IllegalStateException("cannot read /proc", e);
        }
        Map<Long, List<Stat>> children = new HashMap<>();
        Set<Long> members = new HashSet<>();
        for (Stat stat : all) {
            children.computeIfAbsent(stat.ppid(), k -> new ArrayList<>()).add(stat);
            // Linux does not reuse a pid while it names a live session or group, so these ids cannot be stale; the
            // leader's own pid is its only while its start time is the one recorded and its supervisor its parent (a
            // leader reaped at once, its pid reused before the handle was read, is never taken for it).
            if ((stat.pid() == leader && leaderStart >= 0 && supervisor >= 0 && stat.startTime() == leaderStart && stat.ppid() == supervisor)
                    || stat.session() == leader
                    || stat.pgrp() == leader) {
                members.add(stat.pid());
            }
        }
        List<Long> frontier = new ArrayList<>(members);
        while (!frontier.isEmpty()) {
            long pid = frontier.remove(frontier.size() - 1);
            for (Stat child : children.getOrDefault(pid, List.of())) {
                if (members.add(child.pid())) {
                    frontier.add(child.pid());
                }
            }
        }
        List<Long> live = new ArrayList<>();
        for (Stat stat : all) {
            if (members.contains(stat.pid()) && isLive(stat)) {
                live.add(stat.pid());
            }
        }
        return live;
    }

    /**
     * The live processes whose real uid is {@code uid}, from {@code /proc/<pid>/status} (the owner of {@code /proc/<pid>}
     * is not enough: a process that made itself non-dumpable shows as root's there).
     */
    public static List<Long> ownedBy(int uid) {
        return ownedBy(java.util.Set.of(uid)).getOrDefault(uid, List.of());
    }

    /** {@link #ownedBy(int)} for several uids in one pass over {@code /proc}: the live processes of each that has any. */
    public static java.util.Map<Integer, List<Long>> ownedBy(java.util.Set<Integer> uids) {
        java.util.Map<Integer, List<Long>> owned = new java.util.HashMap<>();
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(PROC)) {
            for (Path entry : entries) {
                String name = entry.getFileName().toString();
                if (name.isEmpty() || !Character.isDigit(name.charAt(0))) {
                    continue;
                }
                try {
                    long pid = Long.parseLong(name);
                    String uid = realUid(entry);
                    Integer wanted = uid == null ? null : Integer.valueOf(uid);
                    if (wanted != null && uids.contains(wanted) && stat(pid).filter(ProcFs::isLive).isPresent()) {
                        owned.computeIfAbsent(wanted, key -> new ArrayList<>()).add(pid);
                    }
                } catch (IOException | RuntimeException e) {
                    // ended while we looked
                }
            }
        } catch (IOException e) {
            throw new IllegalStateException("cannot read /proc", e);
        }
        return owned;
    }

    /** The real uids of all live processes. */
    public static java.util.Set<Integer> realUids() {
        java.util.Set<Integer> uids = new HashSet<>();
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(PROC)) {
            for (Path entry : entries) {
                String name = entry.getFileName().toString();
                if (!name.isEmpty() && Character.isDigit(name.charAt(0))) {
                    try {
                        String uid = realUid(entry);
                        if (uid != null) {
                            uids.add(Integer.valueOf(uid));
                        }
                    } catch (IOException | RuntimeException e) {
                        // ended while we looked
                    }
                }
            }
        } catch (IOException e) {
            throw new IllegalStateException("cannot read /proc", e);
        }
        return uids;
    }

    /**
     * The real uid of a process, from the {@code Uid:} line of its status ("real effective saved fs"), which comes
     * within its first lines: only those are read (a scan reads one status per process of the machine).
     */
    private static String realUid(Path processDir) throws IOException {
        byte[] head = new byte[1024];
        int length = 0;
        try (java.io.InputStream in = Files.newInputStream(processDir.resolve("status"))) {
            for (int read; length < head.length && (read = in.read(head, length, head.length - length)) > 0; ) {
                length += read;
            }
        }
        String text = new String(head, 0, length, StandardCharsets.ISO_8859_1);
        int at = text.indexOf("\nUid:");
        if (at < 0) {
            return null;
        }
        int from = at + 5;
        while (from < text.length() && (text.charAt(from) == '\t' || text.charAt(from) == ' ')) {
            from++;
        }
        int to = from;
        while (to < text.length() && Character.isDigit(text.charAt(to))) {
            to++;
        }
        return to > from ? text.substring(from, to) : null;
    }

    /** Identifies this boot of the machine: a pid recorded before a reboot means nothing after it. */
    public static String bootId() {
        try {
            return Files.readString(PROC.resolve("sys/kernel/random/boot_id"), StandardCharsets.UTF_8).trim();
        } catch (IOException e) {
            return "unknown";
        }
    }

    /** The children of every thread of {@code pid} (none once it ended). */
    static List<Long> children(long pid) {
        List<Long> children = new ArrayList<>();
        try (DirectoryStream<Path> tasks = Files.newDirectoryStream(PROC.resolve(Long.toString(pid)).resolve("task"))) {
            for (Path task : tasks) {
                try {
                    for (String child : Files.readString(task.resolve("children"), StandardCharsets.US_ASCII).trim().split(" ")) {
                        if (!child.isEmpty()) {
                            children.add(Long.valueOf(child));
                        }
                    }
                } catch (IOException | NumberFormatException e) {
                    // the thread ended meanwhile
                }
            }
        } catch (IOException e) {
            // the process ended meanwhile
        }
        return children;
    }

    /** The lines of {@code /proc/<pid>/net/<table>} (the sockets of its network namespace); none if it ended. */
    public static List<String> netTable(long pid, String table) {
        try {
            return Files.readAllLines(PROC.resolve(Long.toString(pid)).resolve("net").resolve(table), StandardCharsets.US_ASCII);
        } catch (IOException e) {
            return List.of(); // gone, or no IPv6
        }
    }

    /** Whether this process runs as root (its effective uid). */
    public static boolean runningAsRoot() {
        try {
            for (String line : Files.readAllLines(PROC.resolve("self/status"), StandardCharsets.UTF_8)) {
                if (line.startsWith("Uid:")) {
                    return line.split("\\s+")[2].equals("0"); // the effective uid
                }
            }
        } catch (IOException e) {
            return false;
        }
        return false;
    }

    /**
     * Sets this process's {@code oom_score_adj} (what it starts inherits it); {@code false} if it may not (lowering it
     * needs root).
     */
    public static boolean setOwnOomScoreAdj(int adj) {
        if (adj < 0 && !runningAsRoot()) {
            return false;
        }
        try {
            Files.writeString(PROC.resolve("self/oom_score_adj"), Integer.toString(adj), StandardCharsets.US_ASCII,
                    java.nio.file.StandardOpenOption.WRITE);
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    /** A process's {@code oom_score_adj}, or empty if it is gone. */
    public static java.util.OptionalInt oomScoreAdj(long pid) {
        try {
            return java.util.OptionalInt.of(Integer.parseInt(Files.readString(PROC.resolve(pid + "/oom_score_adj"), StandardCharsets.US_ASCII).trim()));
        } catch (IOException | NumberFormatException e) {
            return java.util.OptionalInt.empty();
        }
    }

    /** The machine's largest pid ({@code kernel.pid_max}), or empty if it cannot be read. */
    public static java.util.OptionalLong pidMax() {
        try {
            // Read in one go: a sysctl file says it is empty, and answers a read past its first byte with nothing, so
            // Files.readString (which reads one byte, then the rest) saw only the first digit.
            try (java.io.InputStream in = Files.newInputStream(PROC.resolve("sys/kernel/pid_max"))) {
                return java.util.OptionalLong.of(Long.parseLong(new String(in.readAllBytes(), StandardCharsets.US_ASCII).trim()));
            }
        } catch (IOException | RuntimeException e) {
            return java.util.OptionalLong.empty();
        }
    }

    /** The machine's memory in bytes ({@code MemTotal} of {@code /proc/meminfo}), or empty if it cannot be read. */
    public static java.util.OptionalLong memTotal() {
        try {
            for (String line : Files.readAllLines(PROC.resolve("meminfo"), StandardCharsets.UTF_8)) {
                if (line.startsWith("MemTotal:")) {
                    return java.util.OptionalLong.of(Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024);
                }
            }
        } catch (IOException | NumberFormatException e) {
            // fall through
        }
        return java.util.OptionalLong.empty();
    }

    /** The cores this server may run on ({@code Cpus_allowed_list} of {@code /proc/self/status}), or empty if unknown. */
    public static Optional<String> allowedCores() {
        try {
            for (String line : Files.readAllLines(PROC.resolve("self/status"), StandardCharsets.UTF_8)) {
                if (line.startsWith("Cpus_allowed_list:")) {
                    return Optional.of(line.substring("Cpus_allowed_list:".length()).strip());
                }
            }
        } catch (IOException e) {
            // fall through
        }
        return Optional.empty();
    }
}
