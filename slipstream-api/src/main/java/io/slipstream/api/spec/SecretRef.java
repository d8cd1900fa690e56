package io.slipstream.api.spec;

import static java.util.Objects.requireNonNull;

/**
 * An environment variable whose value comes from a Secret of the job's workspace: {@code {secretRef: <secret>/<key>}}.
 * Only the reference is kept with the job and its runs; the value is looked up when an instance launches.
 */
public record SecretRef(String secret, String key) {
    public SecretRef {
        requireNonNull(secret, "secret is null");
        requireNonNull(key, "key is null");
    }

    /** {@code <secret>/<key>}, as written in a spec (checked before: see {@link SpecChecks}). */
    public static SecretRef parse(String text) {
        int slash = text.indexOf('/');
        return new SecretRef(text.substring(0, Math.max(0, slash)), text.substring(slash + 1));
    }

    /** {@code <secret>/<key>}, as written in a spec. */
    @Override
    public String toString() {
        return secret + "/" + key;
    }
}
