package io.slipstream.api.spec;

import static java.util.Objects.requireNonNull;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonProperty;

/**
 * Storage shared by every instance of a run. Locally it is a directory under the data dir, at
 * {@code storage/<workspace>/<scope root>/<subPath or name>}; on a cluster a volume mounted at {@code mountPath}.
 *
 * @param subPath   a relative path inside the scope's root ({@code null}: the storage's name); never leaves it
 * @param mountPath where cluster executors mount it in the container ({@code null}: {@code /mnt/<name>})
 */
public record StorageSpec(String name, StorageScope scope, String subPath, String mountPath) {
    public StorageSpec {
        requireNonNull(name, "name is null");
        requireNonNull(scope, "scope is null");
    }

    /** The document form: paths normalized. */
    @JsonCreator
    public static StorageSpec of(@JsonProperty("name") String name, @JsonProperty("scope") StorageScope scope,
                                 @JsonProperty("subPath") String subPath, @JsonProperty("mountPath") String mountPath) {
        return new StorageSpec(name, scope, SecretMount.normalized(subPath), SecretMount.normalized(mountPath));
    }

    /** The path inside the scope's root. */
    public String pathInScope() {
        return subPath == null ? name : subPath;
    }

    /** The environment variable that names its local path: {@code SLIPSTREAM_STORAGE_<NAME>}. */
    public String envName() {
        return envNameOf(name);
    }

    public static String envNameOf(String storageName) {
        return "SLIPSTREAM_STORAGE_" + storageName.toUpperCase(java.util.Locale.ROOT).replace('-', '_');
    }
}
