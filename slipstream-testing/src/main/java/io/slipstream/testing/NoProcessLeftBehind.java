package io.slipstream.testing;

import java.io.IOException;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.io.TempDir;

/**
 * Fails a test class (or test) that leaves a process running in its {@link TempDir}: instances outlive the server by
 * design, so a test that stops its server without cancelling its runs leaves their processes behind, on a developer's
 * machine and in CI alike. A process counts when its working directory or its command line lies under one of the
 * test's {@code @TempDir} fields (static ones after all tests, instance ones after each test), which is where every
 * instance lives (its working directory, and its supervisor's command line, are under the server's data dir), and no
 * other build's process can be: the paths are this test's own. Processes that are on their way out get a few seconds.
 *
 * <p>Use it with {@code @ExtendWith(NoProcessLeftBehind.class)}; it needs Linux's {@code /proc}. {@code .ci/run} checks
 * the whole build the same way, after it ends.
 */
public final class NoProcessLeftBehind implements AfterEachCallback, AfterAllCallback {
    private static final Duration GRACE = Duration.ofSeconds(15);

    @Override
    public void afterEach(ExtensionContext context) throws Exception {
        Object instance = context.getRequiredTestInstance();
        check(tempDirs(context.getRequiredTestClass(), instance, false), context.getDisplayName());
    }

    @Override
    public void afterAll(ExtensionContext context) throws Exception {
        check(tempDirs(context.getRequiredTestClass(), null, true), context.getDisplayName());
    }

    private static List<Path> tempDirs(Class<?> type, Object instance, boolean statics) throws IllegalAccessException {
        List<Path> dirs = new ArrayList<>();
        for (Class<?> c = type; c != null && c != Object.class; c = c.getSuperclass()) {
            for (Field field : c.getDeclaredFields()) {
                if (!field.isAnnotationPresent(TempDir.class) || Modifier.isStatic(field.getModifiers()) != statics) {
                    continue;
                }
                field.setAccessible(true);
                Object value = field.get(statics ? null : instance);
                if (value instanceof Path path) {
                    dirs.add(path.toAbsolutePath().normalize());
                } else if (value instanceof java.io.File file) {
                    dirs.add(file.toPath().toAbsolutePath().normalize());
                }
            }
        }
        return dirs;
    }

    private static void check(List<Path> dirs, String what) throws InterruptedException {
        if (dirs.isEmpty() || !Files.isDirectory(Path.of("/proc/self"))) {
            return;
        }
        long deadline = System.nanoTime() + GRACE.toNanos();
        List<String> left = leftIn(dirs);
        while (!left.isEmpty() && System.nanoTime() < deadline) {
            Thread.sleep(100); // polling with a deadline: processes being stopped get a moment
            left = leftIn(dirs);
        }
        if (!left.isEmpty()) {
            throw new AssertionError(what + " left " + left.size() + " process(es) running under " + dirs + ":\n  "
                    + String.join("\n  ", left));
        }
    }

    /** "pid: command line" of every live process in one of {@code dirs}. */
    public static List<String> leftIn(List<Path> dirs) {
        return processesIn(dirs).stream().map(Left::toString).toList();
    }

    /** A live process found in a directory: its pid and command line. */
    public record Left(long pid, String commandLine) {
        @Override
        public String toString() {
            return pid + ": " + commandLine;
        }
    }

    /**
     * Every live process (not a zombie, not this one) in one of {@code dirs}: its command line names the directory or
     * a path under it, or it works in it.
     */
    public static List<Left> processesIn(List<Path> dirs) {
        List<Left> found = new ArrayList<>();
        long self = ProcessHandle.current().pid();
        try (DirectoryStream<Path> procs = Files.newDirectoryStream(Path.of("/proc"), p -> p.getFileName().toString().matches("\\d+"))) {
            for (Path proc : procs) {
                long pid = Long.parseLong(proc.getFileName().toString());
                if (pid == self) {
                    continue;
                }
                String commandLine = read(proc.resolve("cmdline")).replace('\0', ' ').strip();
                Optional<Path> cwd = cwd(proc);
                boolean inside = dirs.stream().anyMatch(d -> names(commandLine, d.toString()) || cwd.map(w -> w.startsWith(d)).orElse(false));
                if (inside && !commandLine.isEmpty() && !zombie(proc)) {
                    found.add(new Left(pid, commandLine));
                }
            }
        } catch (IOException e) {
            return found;
        }
        return found;
    }

    /** Whether {@code commandLine} names {@code dir} or a path under it ({@code /a/data} is not in {@code /a/data2}). */
    static boolean names(String commandLine, String dir) {
        for (int at = commandLine.indexOf(dir); at >= 0; at = commandLine.indexOf(dir, at + 1)) {
            int after = at + dir.length();
            if (after == commandLine.length() || commandLine.charAt(after) == '/' || commandLine.charAt(after) == ' ') {
                return true;
            }
        }
        return false;
    }

    private static boolean zombie(Path proc) {
        String stat = read(proc.resolve("stat"));
        int close = stat.lastIndexOf(')');
        return close > 0 && stat.length() > close + 2 && stat.charAt(close + 2) == 'Z';
    }

    private static Optional<Path> cwd(Path proc) {
        try {
            return Optional.of(Files.readSymbolicLink(proc.resolve("cwd")));
        } catch (IOException | UnsupportedOperationException | SecurityException e) {
            return Optional.empty();
        }
    }

    private static String read(Path file) {
        try {
            return new String(Files.readAllBytes(file), StandardCharsets.UTF_8);
        } catch (IOException e) {
            return "";
        }
    }
}
