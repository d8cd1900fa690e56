package io.slipstream.api.spec;

import static java.util.Objects.requireNonNull;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonProperty;

/**
 * A Secret of the job's workspace given to a node group's instances as files, one per key: always under
 * {@code $SLIPSTREAM_SECRETS_DIR/<name>/<key>}, and on container executors also at {@code mountPath} when given.
 */
public record SecretMount(String name, String mountPath) {
    public SecretMount {
        requireNonNull(name, "name is null");
    }

    /** The document form: the path normalized. */
    @JsonCreator
    public static SecretMount of(@JsonProperty("name") String name, @JsonProperty("mountPath") String mountPath) {
        return new SecretMount(name, normalized(mountPath));
    }

    /** {@code path} without {@code .} segments, doubled or trailing slashes ({@code null} stays {@code null}). */
    static String normalized(String path) {
        return path == null ? null : java.nio.file.Path.of(path).normalize().toString();
    }
}
