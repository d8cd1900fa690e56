package io.slipstream.executor.local;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * Runs one of the system's own tools ({@code rm}, {@code mkdir}, {@code fallocate}, {@code kill}) with an argument list
 * (never a shell string), no input, a fixed PATH and nothing else of the server's environment, and waits for it.
 */
final class SystemCommand {
    private static final String PATH = "/usr/sbin:/usr/bin:/sbin:/bin";

    /** How it ended, and the start of what it printed. */
    record Result(int exitCode, String output) {
        boolean succeeded() {
            return exitCode == 0;
        }
    }

    private SystemCommand() {
    }

    static Result run(List<String> argv) throws IOException {
        ProcessBuilder builder = new ProcessBuilder(argv)
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
                .redirectErrorStream(true);
        builder.environment().clear();
        builder.environment().put("PATH", PATH);
        Process process = builder.start();
        String output = new String(process.getInputStream().readNBytes(2000), StandardCharsets.UTF_8).trim();
        process.getInputStream().transferTo(java.io.OutputStream.nullOutputStream());
        try {
            return new Result(process.waitFor(), output);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            process.destroyForcibly();
            throw new IOException("interrupted while running " + argv.get(0), e);
        }
    }
}
