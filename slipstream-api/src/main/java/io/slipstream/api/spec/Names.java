package io.slipstream.api.spec;

import java.util.regex.Pattern;

/** The rules names must follow, each with the sentence a user sees when a name breaks it. */
public final class Names {
    private static final Pattern DNS_LABEL = Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?");
    /** Shapes may carry dots ({@code gpu.8x.h100}): a DNS subdomain of labels. */
    private static final Pattern DNS_SUBDOMAIN = Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*");
    private static final Pattern ENV_NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");
    private static final Pattern SECRET_KEY = Pattern.compile("[-._a-zA-Z0-9]+");
    private static final Pattern USER_NAME = Pattern.compile("[a-z0-9]([a-z0-9._@-]*[a-z0-9])?");
    public static final String RESERVED_ENV_PREFIX = "SLIPSTREAM_";

    private Names() {
    }

    /** Returns why {@code name} is not a DNS label (RFC 1123), or {@code null} if it is one. */
    public static String dnsLabelProblem(String name) {
        if (name.isEmpty()) {
            return "must not be empty";
        }
        if (name.length() > 63) {
            return "must be at most 63 characters (is " + name.length() + ")";
        }
        if (!DNS_LABEL.matcher(name).matches()) {
            return "'" + name + "' is not a DNS label: use lower-case letters, digits and '-', starting and ending with a letter or digit";
        }
        return null;
    }

    /** Returns why {@code name} is not a DNS subdomain (labels joined by dots), or {@code null}. */
    public static String dnsSubdomainProblem(String name) {
        if (name.isEmpty()) {
            return "must not be empty";
        }
        if (name.length() > 253) {
            return "must be at most 253 characters (is " + name.length() + ")";
        }
        if (!DNS_SUBDOMAIN.matcher(name).matches()) {
            return "'" + name + "' is not a valid name: use lower-case letters, digits, '-' and '.', starting and ending with a letter or digit";
        }
        return null;
    }

    /** Returns why {@code name} is not usable as an environment variable name, or {@code null}. */
    public static String envNameProblem(String name) {
        if (name.length() > 256) {
            return "environment variable names must be at most 256 characters";
        }
        if (!ENV_NAME.matcher(name).matches()) {
            return "'" + name + "' is not an environment variable name: use letters, digits and '_', not starting with a digit";
        }
        if (name.startsWith(RESERVED_ENV_PREFIX)) {
            return "'" + name + "' is reserved: names starting with " + RESERVED_ENV_PREFIX + " are set by Slipstream";
        }
        return null;
    }

    /**
     * Returns why {@code key} cannot name a value of a Secret, or {@code null}. Keys become file names (and Kubernetes
     * Secret keys): letters, digits, '-', '_' and '.', at most 128 characters, not {@code .}, {@code ..} or starting
     * with {@code ..}.
     */
    public static String secretKeyProblem(String key) {
        if (key.isEmpty() || key.length() > 128) {
            return "a secret's key must be 1 to 128 characters";
        }
        if (!SECRET_KEY.matcher(key).matches()) {
            return "'" + key + "' is not a key of a secret: use letters, digits, '-', '_' and '.' (it becomes a file name)";
        }
        if (key.equals(".") || key.startsWith("..")) {
            return "'" + key + "' is not a key of a secret: it must not be '.' or start with '..'";
        }
        return null;
    }

    /** Returns why {@code name} is not a valid user name, or {@code null}. */
    public static String userNameProblem(String name) {
        if (name.isEmpty() || name.length() > 128) {
            return "must be 1 to 128 characters";
        }
        if (!USER_NAME.matcher(name).matches()) {
            return "'" + name + "' is not a user name: use lower-case letters, digits, '.', '_', '@' and '-'";
        }
        return null;
    }
}
