package io.slipstream.server.api;

import io.slipstream.api.problem.InvalidInputException;
import io.slipstream.api.problem.Problems;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.HashSet;
import java.util.Set;

/**
 * Checks a request's raw query string before any handler reads it, because the lenient decoding handlers see would
 * hide what is wrong: a parameter given twice (only the first would count), a broken escape ({@code %ZZ}, which is
 * dropped), bytes that are not UTF-8 (which become U+FFFD), and control characters (NUL among them).
 */
final class QueryString {
    private QueryString() {
    }

    /** Throws {@link InvalidInputException} naming every parameter at fault; {@code raw} may be {@code null}. */
    static void check(String raw) {
        if (raw == null || raw.isEmpty()) {
            return;
        }
        Problems problems = new Problems();
        Set<String> names = new HashSet<>();
        for (String pair : raw.split("&", -1)) {
            if (pair.isEmpty()) {
                continue;
            }
            int eq = pair.indexOf('=');
            String name = decode(eq < 0 ? pair : pair.substring(0, eq));
            String shownName = name == null ? pair.substring(0, eq < 0 ? pair.length() : eq) : name;
            if (name == null || eq >= 0 && decode(pair.substring(eq + 1)) == null) {
                problems.add(shown(shownName), "is not a correctly encoded query parameter (escape bytes as %XX, text as UTF-8)");
            } else if (name.isEmpty()) {
                problems.add("", "a query parameter has no name ('" + shown(pair) + "')");
            } else if (hasControl(name) || eq >= 0 && hasControl(decode(pair.substring(eq + 1)))) {
                problems.add(shown(name), "must not contain control characters");
            } else if (!names.add(name)) {
                problems.add(shown(name), "is given more than once (give several values once, separated by commas)");
            }
        }
        problems.throwIfAny("the query is invalid");
    }

    /**
     * Throws {@link InvalidInputException} if the request's path has a broken escape ({@code %ZZ}, or a {@code %} at
     * its end): the router decodes path parameters, and fails on one with a 500 otherwise.
     */
    static void checkPath(String rawPath) {
        for (int i = rawPath.indexOf('%'); i >= 0; i = rawPath.indexOf('%', i + 1)) {
            if (i + 2 >= rawPath.length() || Character.digit(rawPath.charAt(i + 1), 16) < 0 || Character.digit(rawPath.charAt(i + 2), 16) < 0) {
                Problems problems = new Problems();
                problems.add("path", "is not correctly encoded: '%' must be followed by two hex digits ('" + shown(rawPath) + "')");
                problems.throwIfAny("the request's path is invalid");
            }
        }
    }

    /** The text of a query component, or {@code null} if it is not correctly percent-encoded UTF-8. */
    static String decode(String component) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(component.length());
        for (int i = 0; i < component.length(); i++) {
            char c = component.charAt(i);
            if (c == '%') {
                if (i + 2 >= component.length() || Character.digit(component.charAt(i + 1), 16) < 0
                        || Character.digit(component.charAt(i + 2), 16) < 0) {
                    return null;
                }
                bytes.write(Character.digit(component.charAt(i + 1), 16) * 16 + Character.digit(component.charAt(i + 2), 16));
                i += 2;
            } else if (c == '+') {
                bytes.write(' ');
            } else if (c < 0x80) {
                bytes.write(c);
            } else {
                return null; // a raw byte above ASCII in a request target
            }
        }
        try {
            return StandardCharsets.UTF_8.newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(bytes.toByteArray()))
                    .toString();
        } catch (CharacterCodingException e) {
            return null;
        }
    }

    private static boolean hasControl(String text) {
        return text.chars().anyMatch(c -> c < 0x20 || c == 0x7f);
    }

    private static String shown(String text) {
        return text.length() > 64 ? text.substring(0, 64) + "..." : text;
    }
}
