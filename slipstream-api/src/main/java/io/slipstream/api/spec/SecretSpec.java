package io.slipstream.api.spec;

import com.fasterxml.jackson.annotation.JsonCreator;
import java.util.Map;
import java.util.TreeMap;

/**
 * A workspace's named set of secret values ({@code spec.data}: key to UTF-8 text), which its jobs refer to by
 * {@link SecretRef} (an environment variable) or {@link SecretMount} (files). The server keeps it encrypted and
 * never shows a value again; {@link #toString()} names the keys only.
 */
public record SecretSpec(Map<String, SecretValue> data) implements Spec {
    public static final int MAX_KEYS = 64;
    /** Per value, in UTF-8 bytes. */
    public static final int MAX_VALUE_BYTES = 64 * 1024;
    /** All values of one secret together, in UTF-8 bytes (a Kubernetes Secret holds at most 1 MiB). */
    public static final int MAX_TOTAL_BYTES = 256 * 1024;

    @JsonCreator(mode = JsonCreator.Mode.PROPERTIES)
    public SecretSpec {
        data = data == null ? Map.of() : data;
        data = java.util.Collections.unmodifiableMap(new TreeMap<>(data));
    }

    @Override
    public Kind kind() {
        return Kind.Secret;
    }

    @Override
    public String toString() {
        return "SecretSpec[keys=" + data.keySet() + "]";
    }
}
