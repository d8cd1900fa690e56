package io.slipstream.api.label;

import io.slipstream.api.problem.Problem;
import io.slipstream.api.spec.Names;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Pattern;

/**
 * The rules of labels, as Kubernetes has them: a key is {@code [prefix/]name}, the name at most 63 characters of
 * letters, digits, '-', '_' and '.' that starts and ends with a letter or digit, the optional prefix a DNS subdomain of
 * at most 253; a value is empty or a name's form; at most {@value #MAX_LABELS} labels on one object.
 */
public final class Labels {
    public static final int MAX_LABELS = 64;
    public static final int MAX_NAME = 63;
    public static final int MAX_PREFIX = 253;
    /** A prefix, its slash and a name. */
    public static final int MAX_KEY = MAX_PREFIX + 1 + MAX_NAME;
    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?");

    private Labels() {
    }

    /** Why {@code key} is not a label key, or {@code null}. */
    public static String keyProblem(String key) {
        if (key.isEmpty()) {
            return "a label key must not be empty";
        }
        if (key.length() > MAX_KEY) {
            return "a label key must be at most " + MAX_KEY + " characters (is " + key.length() + ")";
        }
        int slash = key.indexOf('/');
        String name = slash < 0 ? key : key.substring(slash + 1);
        if (slash >= 0) {
            String prefix = key.substring(0, slash);
            if (prefix.isEmpty()) {
                return "'" + key + "': the prefix before '/' must not be empty";
            }
            if (name.indexOf('/') >= 0) {
                return "'" + key + "' is not a label key: it is [prefix/]name, with one '/' at most";
            }
            String problem = Names.dnsSubdomainProblem(prefix);
            if (problem != null) {
                return "'" + key + "': the prefix " + problem.replace("'" + prefix + "' is not a valid name", "is not a DNS subdomain");
            }
        }
        if (name.isEmpty()) {
            return "'" + key + "': the name of a label key must not be empty";
        }
        if (name.length() > MAX_NAME) {
            return "'" + key + "': the name of a label key must be at most " + MAX_NAME + " characters (is " + name.length() + ")";
        }
        if (!NAME.matcher(name).matches()) {
            return "'" + key + "' is not a label key: its name uses letters, digits, '-', '_' and '.', starting and ending with a letter or digit";
        }
        return null;
    }

    /** Why {@code value} is not a label value, or {@code null}. */
    public static String valueProblem(String value) {
        if (value.isEmpty()) {
            return null;
        }
        if (value.length() > MAX_NAME) {
            return "a label value must be at most " + MAX_NAME + " characters (is " + value.length() + ")";
        }
        if (!NAME.matcher(value).matches()) {
            return "'" + value + "' is not a label value: use letters, digits, '-', '_' and '.', starting and ending with a letter or digit (or leave it empty)";
        }
        return null;
    }

    /** Every problem of {@code labels}, each at {@code field.<key>} ({@code field} itself for too many). */
    public static List<Problem> problems(String field, Map<String, String> labels) {
        List<Problem> problems = new ArrayList<>();
        if (labels.size() > MAX_LABELS) {
            problems.add(new Problem(field, "must have at most " + MAX_LABELS + " labels (has " + labels.size() + ")"));
        }
        for (Map.Entry<String, String> label : new TreeMap<>(labels).entrySet()) {
            String where = field + "." + label.getKey();
            String problem = keyProblem(label.getKey());
            if (problem == null) {
                problem = label.getValue() == null ? "must be a string, not null" : valueProblem(label.getValue());
            }
            if (problem != null) {
                problems.add(new Problem(where, problem));
            }
        }
        return problems;
    }

    /** {@code base} with {@code over} on top (a key in both takes {@code over}'s value), sorted by key. */
    public static Map<String, String> merged(Map<String, String> base, Map<String, String> over) {
        TreeMap<String, String> merged = new TreeMap<>(base);
        merged.putAll(over);
        return Collections.unmodifiableMap(merged);
    }

    /** {@code labels} sorted by key, unmodifiable; {@code null} is none. */
    public static Map<String, String> sorted(Map<String, String> labels) {
        return labels == null || labels.isEmpty() ? Map.of() : Collections.unmodifiableMap(new TreeMap<>(labels));
    }

    /** {@code k=v,k2=v2}, sorted by key, as kubectl's {@code --show-labels} writes them; {@code <none>} for none. */
    public static String format(Map<String, String> labels) {
        if (labels == null || labels.isEmpty()) {
            return "<none>";
        }
        StringBuilder text = new StringBuilder();
        new TreeMap<>(labels).forEach((k, v) -> text.append(text.length() == 0 ? "" : ",").append(k).append('=').append(v));
        return text.toString();
    }
}
