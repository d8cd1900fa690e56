package io.slipstream.api.spec;

import java.nio.file.Path;
import java.time.Duration;
import java.time.ZoneId;
import java.util.function.Function;
import tools.jackson.databind.JsonNode;

/**
 * The value formats of the schemas ({@code "format": "dns-label"}, {@code "format": "duration:1s..30d"}): for each, why
 * a value is not one, in the words a user sees, or {@code null}. {@link SpecValidator} asserts them; a format with a
 * range ({@code cpu:1m..4096}) names its bounds in the schema itself.
 */
public final class SpecFormats {
    private SpecFormats() {
    }

    /** Why {@code value} is not of {@code format}, or {@code null}; values of another JSON type are left to "type". */
    public static String problem(String format, JsonNode value) {
        Function<JsonNode, String> check = checker(format);
        return check == null ? null : check.apply(value);
    }

    /** Whether {@code format} is one of ours. */
    public static boolean known(String format) {
        return checker(format) != null;
    }

    private static Function<JsonNode, String> checker(String format) {
        int colon = format.indexOf(':');
        String name = colon < 0 ? format : format.substring(0, colon);
        String range = colon < 0 ? "" : format.substring(colon + 1);
        return switch (name) {
            case "dns-label" -> text(Names::dnsLabelProblem);
            case "dns-subdomain" -> text(Names::dnsSubdomainProblem);
            case "user-name" -> text(Names::userNameProblem);
            case "env-name" -> text(Names::envNameProblem);
            case "secret-key" -> text(Names::secretKeyProblem);
            case "label-key" -> text(io.slipstream.api.label.Labels::keyProblem);
            case "label-value" -> text(io.slipstream.api.label.Labels::valueProblem);
            case "quota-name" -> text(t -> suffixed(Names.dnsLabelProblem(t), " (a quota of the job's workspace)"));
            case "secret-name" -> text(t -> suffixed(Names.dnsLabelProblem(t), " (a Secret of the job's workspace)"));
            case "quota-parent" -> text(SpecFormats::quotaParentProblem);
            case "not-blank" -> text(t -> t.isBlank() ? "must not be blank" : null);
            case "program" -> text(t -> t.isBlank() ? "must name the program to run" : null);
            case "image" -> text(t -> t.isBlank() || t.chars().anyMatch(Character::isWhitespace) ? "must be an image reference without spaces" : null);
            case "relative-path" -> text(t -> {
                String problem = SpecReader.relativePathProblem(t);
                return problem == null && !pathable(t) ? NOT_A_PATH : problem;
            });
            case "storage-path" -> text(t -> {
                String problem = SpecReader.relativePathProblem(t);
                if (problem == null && !pathable(t)) {
                    return NOT_A_PATH;
                }
                if (problem == null && SecretMount.normalized(t).isEmpty()) { // '.', './': the scope's root, which no storage is
                    return "must name a directory inside the storage's scope, not '" + t + "' (leave subPath out for the storage's name)";
                }
                return problem == null ? null : problem.replace("the instance's directory", "the workspace's storage");
            });
            case "mount-path" -> text(SpecFormats::mountPathProblem);
            case "cron" -> text(Cron::problem);
            case "time-zone" -> text(SpecFormats::timeZoneProblem);
            case "regex" -> text(SpecFormats::regexProblem);
            case "audience" -> text(SpecFormats::audienceProblem);
            case "secret-ref" -> text(SpecFormats::secretRefProblem);
            case "secret-value" -> text(SpecFormats::secretValueProblem);
            case "exit-code" -> SpecFormats::exitCodeProblem;
            case "duration" -> durationIn(range);
            case "cpu" -> quantityIn(Quantities.CPU, range);
            case "memory" -> quantityIn(Quantities.MEMORY, range);
            default -> null;
        };
    }

    private static Function<JsonNode, String> text(Function<String, String> check) {
        return value -> value.isString() ? check.apply(value.asString()) : null;
    }

    private static String suffixed(String problem, String suffix) {
        return problem == null ? null : problem + suffix;
    }

    private static Function<JsonNode, String> durationIn(String range) {
        String[] bounds = range.split("\\.\\.", -1);
        Duration min = Durations.parse(bounds[0]);
        Duration max = Durations.parse(bounds[1]);
        return text(t -> {
            try {
                Duration duration = Durations.parse(t);
                return duration.compareTo(min) < 0 || duration.compareTo(max) > 0
                        ? "must be between " + Durations.format(min) + " and " + Durations.format(max) : null;
            } catch (IllegalArgumentException e) {
                return e.getMessage();
            }
        });
    }

    private static Function<JsonNode, String> quantityIn(Quantities.Kind kind, String range) {
        String[] bounds = range.split("\\.\\.", -1);
        long min = kind.parse(bounds[0]);
        long max = kind.parse(bounds[1]);
        return value -> {
            if (!value.isString() && !value.isNumber()) {
                return null;
            }
            try {
                long amount = kind.parse(value.asString());
                if (amount < min) {
                    return min <= 1 ? "must be greater than zero" : "is too small";
                }
                return amount > max ? "must be at most " + kind.format(max) : null;
            } catch (IllegalArgumentException e) {
                return e.getMessage();
            }
        };
    }

    private static String quotaParentProblem(String parent) {
        String[] parts = parent.split("/", -1);
        for (String part : parts) {
            if (parts.length > 2 || Names.dnsLabelProblem(part) != null) {
                return "must name a quota: 'name' (same workspace) or 'workspace/name', not '" + parent + "'";
            }
        }
        return null;
    }

    /** What a path the file system cannot hold (a NUL, a lone surrogate, or what the platform cannot encode) is told. */
    private static final String NOT_A_PATH = "is not a path: it holds a character no file name can (a NUL, or a lone surrogate)";

    /** Whether {@code Path.of} takes {@code text} (its InvalidPathException must never escape a format). */
    static boolean pathable(String text) {
        try {
            Path.of(text);
            return true;
        } catch (java.nio.file.InvalidPathException e) {
            return false;
        }
    }

    static String mountPathProblem(String path) {
        if (!path.startsWith("/")) {
            return "must be an absolute path in the container, like /data";
        }
        if (!pathable(path)) {
            return NOT_A_PATH;
        }
        for (String segment : path.split("/")) {
            if (segment.equals("..") || segment.equals(".")) {
                return "must not contain '.' or '..' segments";
            }
        }
        if (Path.of(path).normalize().toString().equals("/")) {
            return "must not be the root directory";
        }
        return null;
    }

    private static String timeZoneProblem(String zone) {
        try {
            ZoneId.of(zone);
            return null;
        } catch (java.time.DateTimeException e) {
            return "'" + zone + "' is not a time zone (examples: UTC, Europe/Berlin, America/New_York)";
        }
    }

    /**
     * An identity token's audience: printable ASCII without spaces (a URL, {@code sts.amazonaws.com}, a Vault role's
     * name), as verifiers compare it byte for byte and it is shown in logs and file listings.
     */
    private static String audienceProblem(String text) {
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c <= ' ' || c > '~') {
                return "must be printable ASCII without spaces (a URL or a name, like sts.amazonaws.com); character " + (i + 1) + " is not";
            }
        }
        return null;
    }

    private static String regexProblem(String text) {
        try {
            java.util.regex.Pattern.compile(text);
            return null;
        } catch (java.util.regex.PatternSyntaxException e) {
            return "is not a regular expression: " + e.getDescription() + " near index " + e.getIndex();
        }
    }

    private static String secretRefProblem(String text) {
        int slash = text.indexOf('/');
        String secret = slash < 0 ? text : text.substring(0, slash);
        String key = slash < 0 ? "" : text.substring(slash + 1);
        if (slash < 0 || Names.dnsLabelProblem(secret) != null || Names.secretKeyProblem(key) != null) {
            return "must be <secret>/<key>: a Secret of the job's workspace and one of its keys, not '" + text + "'"
                    + (slash < 0 ? "" : Names.dnsLabelProblem(secret) != null ? " (" + Names.dnsLabelProblem(secret) + ")"
                    : " (" + Names.secretKeyProblem(key) + ")");
        }
        return null;
    }

    /** A secret's value: never its text in a message. */
    private static String secretValueProblem(String text) {
        if (text.equals(SecretValue.MASK)) {
            return "is " + SecretValue.MASK + ", which is how Slipstream shows a hidden value: give the value itself";
        }
        int bytes = SecretValue.of(text).utf8Length();
        return bytes > SecretSpec.MAX_VALUE_BYTES ? "must be at most " + SecretSpec.MAX_VALUE_BYTES + " bytes (is " + bytes + ")" : null;
    }

    private static String exitCodeProblem(JsonNode node) {
        if (!node.isNumber() && !node.isString()) {
            return null;
        }
        Object value = node.isIntegralNumber() && node.canConvertToLong() ? (Object) node.asLong() : node.isString() ? node.asString() : null;
        if (value != null && FaultTolerance.ExitCodeRange.parse(value) != null) {
            return null;
        }
        String text = node.asString();
        return "must be an exit code (0-255) or a range like \"128-255\", not " + FieldReader.describe(node) + " ("
                + (text.length() > 20 ? text.substring(0, 20) + "..." : text) + ")";
    }
}
