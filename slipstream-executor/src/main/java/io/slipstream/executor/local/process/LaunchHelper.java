package io.slipstream.executor.local.process;

import io.slipstream.executor.local.files.Redirects;
import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The launcher binary in its {@code --serve} mode: one long-lived child of the server that forks each instance's
 * supervisor, as {@code slurmd} does for Slurm, instead of the server spawning the binary for every instance. A start
 * then costs no exec of the binary, and the server no child process of its own, with its pipes and the JDK's thread
 * waiting for its exit: about a third of a start's CPU on a paravirtualised machine (docs/benchmarks.md). The helper
 * tells when a supervisor said it started, and when it ended ({@code src/main/c/slipstream-launch.c} documents the
 * protocol).
 *
 * <p>The helper is started at the first launch and again at the next launch after it died. Supervisors it forked live
 * on without it (each in a session of its own, as when the server dies): their ends are then followed by pid
 * ({@link ExitPoller}), as those of instances adopted after a restart.
 */
public final class LaunchHelper implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(LaunchHelper.class);

    /** A supervisor forked: {@code ended} completes when it ended, or exceptionally when the helper ended first. */
    public record Forked(long pid, CompletableFuture<Void> ended) {
    }

    /** The helper takes no more requests (it died): nothing of this request reached it. */
    private static final class Unreachable extends IOException {
        Unreachable(String message, Throwable cause) {
            super(message, cause);
        }
    }

    /** The helper ended while supervisors it forked may still run: their ends are not heard from it. */
    static final class HelperGone extends IOException {
        HelperGone(String message) {
            super(message);
        }
    }

    /**
     * The largest request the helper takes ({@code MAX_REQUEST_BYTES} in the binary); a start that would need more is
     * refused here, for that instance alone, and never ends the helper the other runs' starts go through.
     */
    static final int MAX_REQUEST_BYTES = 16 << 20;

    private final Path binary;
    private final Path workingDir;
    private final Duration startTimeout;
    private final AtomicLong ids = new AtomicLong();
    private Connection current; // guarded by this
    private boolean closed; // guarded by this

    /**
     * @param binary       the launcher binary
     * @param workingDir   the helper's working directory (the instances' root: the server's alone)
     * @param startTimeout how long a supervisor may take to say it started the command
     */
    LaunchHelper(Path binary, Path workingDir, Duration startTimeout) {
        this.binary = binary;
        this.workingDir = workingDir;
        this.startTimeout = startTimeout;
    }

    /**
     * Forks a supervisor with {@code arguments} (the binary's, after its name) and waits until it said that it started
     * the command, or ended without saying so.
     *
     * @param controlDir the supervisor's working directory
     * @param log        its stderr, appended to (never through a link)
     * @return the supervisor, once it started the command
     * @throws IOException the supervisor ended without starting the command (its log says why), did not start it in
     *                     time (it is killed, with whatever it started), or the helper could not fork it
     */
    public Forked start(Path controlDir, Path log, List<String> arguments) throws IOException {
        if (!arguments.get(0).equals(controlDir.toString())) {
            throw new IllegalArgumentException("the control directory is the supervisor's first argument");
        }
        long id = ids.incrementAndGet();
        Connection connection = connection();
        Pending pending;
        try {
            pending = connection.send(id, log, arguments);
        } catch (Unreachable e) {
            // It died since the last start, and its reader has not told yet: nothing was forked, so once more.
            connection = connection();
            pending = connection.send(id, log, arguments);
        }
        boolean started;
        try {
            started = pending.said.get(startTimeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            abandon(pending);
            throw new IOException("the supervisor did not start the command within " + startTimeout.toSeconds() + "s");
        } catch (ExecutionException e) {
            abandon(pending);
            throw e.getCause() instanceof IOException io ? io : new IOException(e.getCause());
        } catch (InterruptedException e) {
            abandon(pending);
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while the supervisor started", e);
        } finally {
            connection.pending.remove(id);
        }
        if (!started) {
            throw new IOException("the supervisor exited before starting the command");
        }
        return new Forked(pending.pid, pending.ended);
    }

    /**
     * A start that failed must leave nothing running: the supervisor, if it was forked, and whatever it started already
     * (its descendants) are killed; it may live on after the helper died.
     */
    private static void abandon(Pending pending) {
        long pid = pending.pid;
        if (pid > 0) {
            new ProcessTree(pid, -1, -1).killUntilGone();
        }
    }

    /** The pid of the running helper, or -1 (for tests). */
    public synchronized long pid() {
        return current == null || !current.process.isAlive() ? -1 : current.process.pid();
    }

    /** Closes the helper's stdin: it ends, and the supervisors it forked live on. */
    @Override
    public synchronized void close() {
        closed = true;
        if (current != null) {
            current.close();
        }
    }

    private synchronized Connection connection() throws IOException {
        if (closed) {
            throw new IOException("the executor is closed");
        }
        if (current == null || !current.open || !current.process.isAlive()) {
            ProcessBuilder builder = Redirects.startInControlDirectory(new ProcessBuilder(binary.toString(), "--serve"), workingDir)
                    .redirectInput(ProcessBuilder.Redirect.PIPE)
                    .redirectOutput(ProcessBuilder.Redirect.PIPE)
                    .redirectError(ProcessBuilder.Redirect.INHERIT); // the helper's own failures, into the server's log
            builder.environment().clear();
            builder.environment().putAll(Supervisor.ENVIRONMENT);
            if (current != null) {
                LOG.warn("the launch helper ended (exit code {}); starting another", current.process.isAlive() ? "none yet" : current.process.exitValue());
                current.close(); // one that still lives ends with its stdin
            }
            current = new Connection(builder.start());
        }
        return current;
    }

    private static final class Pending {
        final CompletableFuture<Boolean> said = new CompletableFuture<>();
        volatile long pid;
        volatile CompletableFuture<Void> ended;
    }

    /** One helper process: its requests, and a thread that reads its replies. */
    private static final class Connection {
        final Process process;
        final OutputStream requests;
        final Map<Long, Pending> pending = new ConcurrentHashMap<>();
        /** The ends of the supervisors it forked that are not heard of yet, by pid. */
        final Map<Long, CompletableFuture<Void>> ends = new ConcurrentHashMap<>();
        volatile boolean open = true;

        Connection(Process process) {
            this.process = process;
            this.requests = process.getOutputStream();
            Thread reader = new Thread(this::read, "slipstream-launch-helper-" + process.pid());
            reader.setDaemon(true);
            reader.start();
        }

        Pending send(long id, Path log, List<String> arguments) throws IOException {
            ByteArrayOutputStream body = new ByteArrayOutputStream();
            for (String part : concat(Long.toString(id), log.toString(), arguments)) {
                if (part.indexOf('\0') >= 0) {
                    throw new IOException("an argument of the instance's start holds a NUL");
                }
                body.writeBytes(part.getBytes(StandardCharsets.UTF_8));
                body.write(0);
            }
            if (body.size() > MAX_REQUEST_BYTES) {
                throw new IOException("the instance's command and paths take " + body.size() + " bytes, more than a start can carry ("
                        + MAX_REQUEST_BYTES + ")");
            }
            Pending request = new Pending();
            pending.put(id, request);
            try {
                synchronized (this) {
                    requests.write((body.size() + "\n").getBytes(StandardCharsets.US_ASCII));
                    body.writeTo(requests);
                    requests.flush();
                }
            } catch (IOException e) {
                this.pending.remove(id);
                open = false;
                throw new Unreachable("the launch helper does not take requests: " + e.getMessage(), e);
            }
            if (!open) {
                // It ended meanwhile: the reader may have failed the pending ones before this one was there.
                request.said.completeExceptionally(new IOException("the launch helper ended"));
            }
            return request;
        }

        private static List<String> concat(String id, String log, List<String> arguments) {
            List<String> all = new java.util.ArrayList<>(arguments.size() + 2);
            all.add(id);
            all.add(log);
            all.addAll(arguments);
            return all;
        }

        /** Replies, in order for each request: forked (or failed), started or unstarted, exit. */
        private void read() {
            try (BufferedReader replies = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.US_ASCII))) {
                for (String line; (line = replies.readLine()) != null; ) {
                    String[] words = line.split(" ");
                    switch (words[0]) {
                        case "forked" -> {
                            long pid = Long.parseLong(words[2]);
                            CompletableFuture<Void> ended = new CompletableFuture<>();
                            ends.put(pid, ended);
                            Pending p = pending.get(Long.parseLong(words[1]));
                            if (p != null) {
                                p.ended = ended;
                                p.pid = pid;
                            }
                        }
                        case "started", "unstarted" -> {
                            Pending p = pending.get(Long.parseLong(words[1]));
                            if (p != null) {
                                p.said.complete(words[0].equals("started"));
                            }
                        }
                        case "failed" -> {
                            Pending p = pending.get(Long.parseLong(words[1]));
                            if (p != null) {
                                p.said.completeExceptionally(new IOException("the launch helper could not fork a supervisor"));
                            }
                        }
                        case "exit" -> {
                            CompletableFuture<Void> ended = ends.remove(Long.parseLong(words[1]));
                            if (ended != null) {
                                ended.complete(null);
                            }
                        }
                        default -> throw new IOException("the launch helper said " + line);
                    }
                }
            } catch (IOException | RuntimeException e) {
                LOG.warn("cannot read the launch helper: {}", e.toString());
            } finally {
                gone();
            }
        }

        /** Fails what waits on this helper; supervisors still running are then followed by pid. */
        private void gone() {
            open = false;
            process.destroyForcibly(); // after a reply it could not read: the supervisors live on, in sessions of their own
            IOException ended = new IOException("the launch helper ended");
            pending.values().forEach(p -> p.said.completeExceptionally(ended));
            HelperGone gone = new HelperGone("the launch helper ended");
            ends.values().forEach(end -> end.completeExceptionally(gone));
            ends.clear();
        }

        void close() {
            try {
                requests.close();
            } catch (IOException e) {
                LOG.debug("closing the launch helper's stdin: {}", e.toString());
            }
        }
    }
}
