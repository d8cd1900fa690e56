package io.slipstream.store;

import static java.util.Objects.requireNonNull;

import java.time.Instant;
import java.util.Map;
import java.util.TreeMap;

/**
 * A Secret as stored: its values sealed by the server ({@code sealed}: key to the base64 of an encrypted value; the
 * store never sees a value in clear), with the id of the server key that sealed them, and a version that every change
 * increments (compare-and-set, like documents).
 */
public record SecretRecord(String workspace, String name, String keyId, Map<String, String> sealed, long version, Instant createdAt,
                           Instant updatedAt) {
    public SecretRecord {
        requireNonNull(workspace, "workspace is null");
        requireNonNull(name, "name is null");
        requireNonNull(keyId, "keyId is null");
        sealed = java.util.Collections.unmodifiableMap(new TreeMap<>(sealed));
        requireNonNull(createdAt, "createdAt is null");
        requireNonNull(updatedAt, "updatedAt is null");
    }

    /** Its keys, in order. */
    public java.util.Set<String> keys() {
        return sealed.keySet();
    }

    public SecretRecord withSealed(String newKeyId, Map<String, String> newSealed, Instant at) {
        return new SecretRecord(workspace, name, newKeyId, newSealed, version, createdAt, at);
    }

    @Override
    public String toString() {
        return "SecretRecord[" + workspace + "/" + name + ", keys=" + sealed.keySet() + ", version=" + version + "]";
    }
}
