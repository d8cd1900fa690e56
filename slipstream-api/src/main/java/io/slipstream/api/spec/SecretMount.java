package io.slipstream.api.spec;

import static java.util.Objects.requireNonNull;

/**
 * A Secret of the job's workspace given to a node group's instances as files, one per key: always under
 * {@code $SLIPSTREAM_SECRETS_DIR/<name>/<key>}, and on container executors also at {@code mountPath} when given.
 */
public record SecretMount(String name, String mountPath) {
    public SecretMount {
        requireNonNull(name, "name is null");
    }
}
