package io.slipstream.executor.local.cgroup;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;

/**
 * The only reads and writes of cgroup files: the kernel's, under a cgroup mount, root's and never delegated to a run's
 * uid (so no workload can put a link or a FIFO there). A value is written in one write, as the kernel wants it.
 */
final class CgroupFiles {
    private CgroupFiles() {
    }

    /** Writes {@code value} to an existing cgroup file; the kernel's refusal names the file and the value. */
    static void write(Path file, String value) throws IOException {
        try {
            Files.write(file, value.getBytes(StandardCharsets.US_ASCII), StandardOpenOption.WRITE, LinkOption.NOFOLLOW_LINKS);
        } catch (IOException e) {
            throw new IOException("cannot write " + value + " to " + file + ": " + (e.getMessage() == null ? e : e.getMessage()), e);
        }
    }

    /** The file's text, trimmed, or {@code null} if it does not exist (an older kernel, a controller not enabled). */
    static String read(Path file) throws IOException {
        try {
            return Files.readString(file, StandardCharsets.US_ASCII).trim();
        } catch (NoSuchFileException e) {
            return null;
        }
    }

    /** A flat-keyed file's value ({@code oom_kill 3} in {@code memory.events}), or -1 if the file or the key is missing. */
    static long keyed(Path file, String key) throws IOException {
        String text = read(file);
        if (text == null) {
            return -1;
        }
        for (String line : text.split("\n")) {
            String[] parts = line.trim().split("\\s+");
            if (parts.length == 2 && parts[0].equals(key)) {
                return Long.parseLong(parts[1]);
            }
        }
        return -1;
    }

    /** A file holding one number, or -1 if it does not exist. */
    static long number(Path file) throws IOException {
        String text = read(file);
        return text == null || text.isEmpty() || text.equals("max") ? -1 : Long.parseLong(text);
    }

    /** The processes in a cgroup ({@code cgroup.procs}, host pids); none if it is gone. */
    static List<Long> processes(Path cgroup) throws IOException {
        String text = read(cgroup.resolve("cgroup.procs"));
        List<Long> pids = new ArrayList<>();
        if (text != null) {
            for (String line : text.split("\n")) {
                if (!line.isBlank()) {
                    pids.add(Long.parseLong(line.trim()));
                }
            }
        }
        return pids;
    }

    /**
     * How many tasks (processes and threads) the machine can have at once: the least of {@code kernel.pid_max} and
     * {@code kernel.threads-max}, or -1 if neither can be read. Each is read in one go: a sysctl file answers a read past
     * its first byte with nothing.
     */
    static long hostTasks() {
        long least = -1;
        for (String name : java.util.List.of("/proc/sys/kernel/pid_max", "/proc/sys/kernel/threads-max")) {
            try (java.io.InputStream in = Files.newInputStream(Path.of(name))) {
                long value = Long.parseLong(new String(in.readAllBytes(), StandardCharsets.US_ASCII).trim());
                least = least < 0 ? value : Math.min(least, value);
            } catch (IOException | RuntimeException e) {
                // not this one
            }
        }
        return least;
    }

    static boolean exists(Path file) {
        return Files.exists(file, LinkOption.NOFOLLOW_LINKS);
    }

    /** Makes a cgroup (and its parents): on a cgroup file system a directory is a cgroup, with its files made by the kernel. */
    static void makeCgroup(Path dir) throws IOException {
        Files.createDirectories(dir);
    }

    /** Removes an empty cgroup; {@code false} if it still has processes (the kernel says busy) or is gone. */
    static boolean removeCgroup(Path dir) throws IOException {
        try {
            Files.delete(dir);
            return true;
        } catch (NoSuchFileException e) {
            return false;
        } catch (java.nio.file.FileSystemException e) {
            if (e.getMessage() != null && e.getMessage().contains("busy")) {
                return false;
            }
            throw e;
        }
    }

    /** Removes each parent's child cgroups that have no process, then the parent if that left it empty; best effort. */
    static void removeEmpty(List<Path> parents, java.util.function.Predicate<String> kept) {
        for (Path parent : parents) {
            try (java.util.stream.Stream<Path> children = Files.list(parent)) {
                for (Path child : children.filter(path -> Files.isDirectory(path, LinkOption.NOFOLLOW_LINKS)).toList()) {
                    if (!kept.test(child.getFileName().toString()) && processes(child).isEmpty()) {
                        removeCgroup(child);
                    }
                }
                removeCgroup(parent);
            } catch (IOException | RuntimeException e) {
                // gone already, or busy: the next start finds what is left
            }
        }
    }

    /**
     * Removes a cgroup if nothing is under it (no process, no cgroup): a server's parent after its start's try-out, or
     * the parent of another data directory's server (this one's before it was moved), under which nothing makes cgroups
     * any more. A running server's own parent stays after that (a launch may be making a cgroup under it).
     */
    static void removeIfEmpty(Path dir) {
        try {
            removeCgroup(dir);
        } catch (IOException e) {
            // another cgroup under it: it stays until that one goes
        }
    }
}
