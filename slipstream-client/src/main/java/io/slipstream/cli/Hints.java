package io.slipstream.cli;

import java.util.regex.Pattern;

/**
 * How hints spell the command ({@code follow it with: ./slipstream logs -f ID}): as the user invoked it, which the
 * {@code ./slipstream} script passes in {@code $SLIPSTREAM_COMMAND} ({@code ./slipstream}, or {@code slipstream} when it
 * was found on the PATH); otherwise ({@code java -jar}, tests) as the docs spell it.
 */
public final class Hints {
    static final String DOCUMENTED = "./slipstream";
    private static final Pattern PLAIN = Pattern.compile("[A-Za-z0-9_./+-]+");

    private Hints() {
    }

    public static String command() {
        return command(System.getenv("SLIPSTREAM_COMMAND"));
    }

    /** {@code invokedAs}, quoted for a shell where it must be; {@link #DOCUMENTED} when there is none. */
    static String command(String invokedAs) {
        if (invokedAs == null || invokedAs.isBlank() || invokedAs.chars().anyMatch(Character::isISOControl)) {
            return DOCUMENTED;
        }
        return PLAIN.matcher(invokedAs).matches() ? invokedAs : "'" + invokedAs.replace("'", "'\\''") + "'";
    }
}
