package io.slipstream.store.memory;

import io.slipstream.store.CredentialReads;
import io.slipstream.store.SecretRecord;
import io.slipstream.store.TokenRecord;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.function.Supplier;

/** {@link CredentialReads} over {@link TokenTable}, {@link SecretTable} and {@link ServerKeyTable}. */
final class InMemoryCredentials implements CredentialReads {
    private final Supplier<Tables> tables;

    InMemoryCredentials(Supplier<Tables> tables) {
        this.tables = tables;
    }

    @Override
    public Optional<TokenRecord> tokenByHash(String hash) {
        return TokenTable.findByHash(tables.get(), hash);
    }

    @Override
    public List<TokenRecord> tokens() {
        return TokenTable.list(tables.get());
    }

    @Override
    public boolean hasAdminToken(Instant now) {
        return TokenTable.hasAdmin(tables.get(), now);
    }

    @Override
    public Optional<SecretRecord> secret(String workspace, String name) {
        return SecretTable.get(tables.get(), workspace, name);
    }

    @Override
    public List<SecretRecord> secrets(Set<String> workspaces) {
        return InMemoryReads.none(workspaces) ? List.of() : SecretTable.list(tables.get(), workspaces);
    }

    @Override
    public Optional<String> serverKeyId(String purpose) {
        return ServerKeyTable.keyId(tables.get(), purpose);
    }

    @Override
    public java.util.List<io.slipstream.store.IdentityKey> identityKeys() {
        return tables.get().identityKeys.values().stream()
                .sorted(java.util.Comparator.comparing(io.slipstream.store.IdentityKey::createdAt).thenComparing(io.slipstream.store.IdentityKey::kid))
                .toList();
    }
}
