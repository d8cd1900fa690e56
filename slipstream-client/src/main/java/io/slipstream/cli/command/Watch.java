package io.slipstream.cli.command;

import io.slipstream.cli.CliException;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Polls something and prints it again each time what it shows changes, until it is done or Ctrl-C. */
final class Watch {
    /** What one poll shows: {@code text} is printed when {@code key} differs from the last one's. */
    record Frame(String text, String key, boolean done) {
    }

    @FunctionalInterface
    interface Pause {
        void sleep(Duration duration) throws InterruptedException;
    }

    static final Pause SLEEP = duration -> Thread.sleep(duration.toMillis());

    /** A command's {@code --timeout} of its {@code --wait}, checked before anything is sent; {@code null} for none. */
    static Duration timeout(boolean await, String timeout) {
        if (timeout == null) {
            return null;
        }
        if (!await) {
            throw new io.slipstream.cli.CliException(io.slipstream.cli.CliException.REJECTED, "--timeout needs --wait");
        }
        Duration duration;
        try {
            duration = io.slipstream.api.spec.Durations.parse(timeout);
        } catch (IllegalArgumentException e) {
            throw new io.slipstream.cli.CliException(io.slipstream.cli.CliException.REJECTED, "--timeout: " + e.getMessage());
        }
        if (duration.isZero() || duration.isNegative()) {
            throw new io.slipstream.cli.CliException(io.slipstream.cli.CliException.REJECTED, "--timeout: must be longer than 0s");
        }
        return duration;
    }

    private static final Pattern DURATION = Pattern.compile("(\\d+)(ms|s|m)");

    private Watch() {
    }

    /**
     * Polls, first after {@code first}, then doubling up to {@code max} (the same interval for a plain watch); returns
     * the last thing polled once its frame is done, or when interrupted.
     */
    static <T> T run(Supplier<T> poll, Function<T, Frame> render, PrintWriter out, Duration first, Duration max, Pause pause) {
        String last = null;
        Duration wait = first;
        while (true) {
            T polled = poll.get();
            Frame frame = render.apply(polled);
            if (!frame.key().equals(last)) {
                out.print(frame.text());
                out.flush();
                last = frame.key();
            }
            if (frame.done()) {
                return polled;
            }
            try {
                pause.sleep(wait);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return polled;
            }
            wait = wait.multipliedBy(2).compareTo(max) > 0 ? max : wait.multipliedBy(2);
        }
    }

    /** {@code 500ms}, {@code 2s}, {@code 1m}: at least 100ms, so that a watch cannot hammer the server. */
    static Duration interval(String option, String text) {
        Matcher m = DURATION.matcher(text == null ? "" : text.trim());
        if (!m.matches()) {
            throw new CliException(CliException.REJECTED, option + ": '" + text + "' is not a duration like 500ms, 2s or 1m");
        }
        long amount = Long.parseLong(m.group(1));
        Duration duration = switch (m.group(2)) {
            case "ms" -> Duration.ofMillis(amount);
            case "s" -> Duration.ofSeconds(amount);
            default -> Duration.ofMinutes(amount);
        };
        if (duration.compareTo(Duration.ofMillis(100)) < 0) {
            throw new CliException(CliException.REJECTED, option + ": " + text + " is too short; at least 100ms");
        }
        return duration;
    }
}
