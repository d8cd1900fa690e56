package io.slipstream.store;

import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * Tokens (by the hash of their value), secrets (sealed by the server: the store never sees a value in clear), and the
 * ids registered once per store: its keys (to refuse a wrong key file) and its own identity (a wrong store).
 */
public interface CredentialReads {

    /** The token with this hash, whatever its hash scheme (the caller checks the scheme). */
    Optional<TokenRecord> tokenByHash(String hash);

    List<TokenRecord> tokens();

    boolean hasAdminToken(Instant now);

    Optional<SecretRecord> secret(String workspace, String name);

    /** Secrets ordered by workspace then name, of {@code workspaces} ({@code null}: all). */
    List<SecretRecord> secrets(Set<String> workspaces);

    /** The id of the key the store's data of {@code purpose} is protected with, if one was registered. */
    Optional<String> serverKeyId(String purpose);

    /** The keys runs' identity tokens are signed with, oldest first (then by id). */
    List<IdentityKey> identityKeys();
}
