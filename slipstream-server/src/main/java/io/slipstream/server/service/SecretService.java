package io.slipstream.server.service;

import io.slipstream.api.spec.Document;
import io.slipstream.api.spec.Names;
import io.slipstream.api.spec.NodeGroupSpec;
import io.slipstream.api.spec.SecretMount;
import io.slipstream.api.spec.SecretRef;
import io.slipstream.api.spec.SecretSpec;
import io.slipstream.api.spec.SecretValue;
import io.slipstream.api.wire.ApplyResultView;
import io.slipstream.api.wire.SecretView;
import io.slipstream.executor.LaunchSpec;
import io.slipstream.server.api.ApiException;
import io.slipstream.server.auth.Principal;
import io.slipstream.server.control.LaunchSecrets;
import io.slipstream.server.secret.SecretCipher;
import io.slipstream.store.ConflictException;
import io.slipstream.store.SecretRecord;
import io.slipstream.store.Store;
import io.slipstream.store.StoreTx;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;

/**
 * Secrets: applied like every document, kept sealed with the server's key, shown by name and keys only (every value
 * {@code ***}), and opened only when an instance that refers to them launches. The members of a workspace (who own
 * its jobs, and the credentials those use) and admins create, change and delete its secrets and see their keys;
 * nobody, an admin neither, reads a value back through the API. A run's token reaches none of this.
 */
public final class SecretService implements LaunchSecrets {
    private final Store store;
    private final SecretCipher cipher;

    public SecretService(Store store, SecretCipher cipher) {
        this.store = store;
        this.cipher = cipher;
    }

    /** Creates or changes a secret in {@code tx}: "unchanged" when every value is the same (compared opened, in memory). */
    ApplyResultView apply(StoreTx tx, Document<SecretSpec> document, Instant now) {
        String workspace = document.workspace();
        String name = document.name();
        Optional<SecretRecord> existing = tx.credentials().secret(workspace, name);
        Long expected = document.metadata().version();
        if (existing.isEmpty()) {
            if (expected != null) {
                throw new ConflictException(document.reference() + " does not exist, but version " + expected + " was expected");
            }
            SecretRecord created = tx.createSecret(new SecretRecord(workspace, name, cipher.keyId(), seal(workspace, name, document.spec().data()),
                    0, now, now));
            return result(document, "created", created.version());
        }
        SecretRecord current = existing.get();
        if (expected != null && expected != current.version()) {
            throw new ConflictException(document.reference() + " is at version " + current.version() + ", not " + expected
                    + ": it was changed meanwhile; read it again and reapply");
        }
        if (open(current).equals(document.spec().data())) {
            return result(document, "unchanged", current.version());
        }
        SecretRecord updated = tx.updateSecret(current.withSealed(cipher.keyId(), seal(workspace, name, document.spec().data()), now));
        return result(document, "updated", updated.version());
    }

    private static ApplyResultView result(Document<?> document, String action, long version) {
        return new ApplyResultView(document.kind().name(), document.workspace(), document.name(), action, version);
    }

    public SecretView get(Principal caller, String workspace, String name) {
        if (!caller.canAccess(workspace)) {
            throw notFound(workspace, name);
        }
        return store.credentials().secret(workspace, name).map(SecretService::view).orElseThrow(() -> notFound(workspace, name));
    }

    /** Secrets of the caller's workspaces (all, for admins), or of one. */
    public List<SecretView> list(Principal caller, String workspace) {
        if (workspace != null) {
            return caller.canAccess(workspace) ? store.credentials().secrets(Set.of(workspace)).stream().map(SecretService::view).toList() : List.of();
        }
        return store.credentials().secrets(caller.visibleWorkspaces()).stream().map(SecretService::view).toList();
    }

    /** Deletes a secret; runs that refer to it and start later fail with the reason (those running keep what they got). */
    public void delete(Principal caller, String workspace, String name) {
        if (!caller.canAccess(workspace)) {
            throw notFound(workspace, name);
        }
        SecretRecord current = store.credentials().secret(workspace, name).orElseThrow(() -> notFound(workspace, name));
        try {
            store.commit(tx -> tx.deleteSecret(workspace, name, current.version()));
        } catch (ConflictException e) {
            throw ApiException.conflict(e.getMessage());
        }
    }

    @Override
    public Resolved resolve(String workspace, NodeGroupSpec group) {
        if (!group.usesSecrets()) {
            return Resolved.NONE;
        }
        Map<String, Map<String, SecretValue>> opened = new LinkedHashMap<>();
        Map<String, LaunchSpec.SecretEnv> env = new TreeMap<>();
        for (Map.Entry<String, SecretRef> entry : group.secretEnv().entrySet()) {
            SecretRef ref = entry.getValue();
            SecretValue value = opened.computeIfAbsent(ref.secret(), secret -> values(workspace, secret)).get(ref.key());
            if (value == null) {
                throw new Unavailable("secret " + workspace + "/" + ref.secret() + " has no key " + ref.key() + " any more (env " + entry.getKey()
                        + " of node group " + group.name() + "); it changed after the run was submitted");
            }
            env.put(entry.getKey(), new LaunchSpec.SecretEnv(ref.secret(), ref.key(), value));
        }
        List<LaunchSpec.SecretFiles> files = new ArrayList<>();
        for (SecretMount mount : group.secrets()) {
            files.add(new LaunchSpec.SecretFiles(mount.name(), mount.mountPath(), opened.computeIfAbsent(mount.name(), secret -> values(workspace, secret))));
        }
        return new Resolved(env, files);
    }

    private Map<String, SecretValue> values(String workspace, String name) {
        SecretRecord secret = store.credentials().secret(workspace, name).orElseThrow(() -> new Unavailable("secret " + workspace + "/" + name
                + " does not exist any more; it was deleted after the run was submitted"));
        try {
            return open(secret);
        } catch (SecretCipher.SecretUnreadableException e) {
            throw new Unavailable(e.getMessage());
        }
    }

    private Map<String, String> seal(String workspace, String name, Map<String, SecretValue> data) {
        Map<String, String> sealed = new TreeMap<>();
        data.forEach((key, value) -> {
            if (Names.secretKeyProblem(key) != null) {
                throw new IllegalArgumentException(Names.secretKeyProblem(key));
            }
            sealed.put(key, cipher.seal(workspace, name, key, value));
        });
        return sealed;
    }

    private Map<String, SecretValue> open(SecretRecord secret) {
        Map<String, SecretValue> values = new TreeMap<>();
        secret.sealed().forEach((key, sealed) -> values.put(key, cipher.open(secret.workspace(), secret.name(), key, sealed)));
        return values;
    }

    static SecretView view(SecretRecord secret) {
        Map<String, String> masked = new TreeMap<>();
        secret.keys().forEach(key -> masked.put(key, SecretValue.MASK));
        return new SecretView(Document.API_VERSION, "Secret",
                new SecretView.Metadata(secret.name(), secret.workspace(), secret.version(), secret.createdAt(), secret.updatedAt()),
                new SecretView.Spec(masked));
    }

    private static ApiException notFound(String workspace, String name) {
        return ApiException.notFound("Secret " + workspace + "/" + name + " not found");
    }
}
