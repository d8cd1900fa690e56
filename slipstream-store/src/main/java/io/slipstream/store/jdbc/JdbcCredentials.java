package io.slipstream.store.jdbc;

import io.slipstream.store.CredentialReads;
import io.slipstream.store.SecretRecord;
import io.slipstream.store.TokenRecord;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/** {@link CredentialReads} over {@link TokenRows}, {@link SecretRows} and {@link ServerKeyRows}. */
final class JdbcCredentials implements CredentialReads {
    private final Handles handles;

    JdbcCredentials(Handles handles) {
        this.handles = handles;
    }

    @Override
    public Optional<TokenRecord> tokenByHash(String hash) {
        return handles.with(h -> TokenRows.findByHash(h, hash));
    }

    @Override
    public List<TokenRecord> tokens() {
        return handles.with(TokenRows::list);
    }

    @Override
    public boolean hasAdminToken(Instant now) {
        return handles.with(h -> TokenRows.hasAdmin(h, now));
    }

    @Override
    public Optional<SecretRecord> secret(String workspace, String name) {
        return handles.with(h -> SecretRows.get(h, workspace, name));
    }

    @Override
    public List<SecretRecord> secrets(Set<String> workspaces) {
        return Handles.none(workspaces) ? List.of() : handles.with(h -> SecretRows.list(h, workspaces));
    }

    @Override
    public Optional<String> serverKeyId(String purpose) {
        return handles.with(h -> ServerKeyRows.keyId(h, purpose));
    }

    @Override
    public List<io.slipstream.store.IdentityKey> identityKeys() {
        return handles.with(IdentityKeyRows::list);
    }
}
