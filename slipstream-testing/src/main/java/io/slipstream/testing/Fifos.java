package io.slipstream.testing;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/** Writing to a named pipe a test's instance reads: with a deadline, since opening one blocks until a reader comes. */
public final class Fifos {
    private Fifos() {
    }

    /**
     * Writes {@code text} to the pipe once a reader has it open; fails after {@code timeout} if none comes (the instance
     * that should read it is gone), unblocking the writer by reading the pipe itself, so no thread is left waiting.
     */
    public static void write(Path fifo, String text, Duration timeout) throws IOException, InterruptedException {
        CompletableFuture<Void> written = CompletableFuture.runAsync(() -> {
            try {
                Files.writeString(fifo, text, StandardCharsets.UTF_8);
            } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        });
        try {
            written.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            try (InputStream drain = Files.newInputStream(fifo)) {
                drain.readAllBytes(); // the writer's open returns: its thread ends
            }
            throw new AssertionError("nobody read " + fifo + " within " + timeout + ": the process that should have is gone");
        } catch (ExecutionException e) {
            throw new IOException("cannot write " + fifo, e.getCause());
        }
    }
}
