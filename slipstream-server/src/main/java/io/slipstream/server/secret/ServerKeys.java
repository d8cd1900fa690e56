package io.slipstream.server.secret;

import static java.util.Objects.requireNonNull;

import io.slipstream.api.spec.SecretValue;
import io.slipstream.store.ConflictException;
import io.slipstream.store.SecretRecord;
import io.slipstream.store.Store;
import io.slipstream.store.TokenRecord;
import java.nio.file.Path;
import java.time.Clock;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The server's key material, from two files: the secret key (AES-256, seals the values of Secrets) and the token
 * pepper (HMAC key of stored token hashes). Each is made at the first start if missing, and its id is registered in
 * the store, so a server started with another file (a lost one, or another server's) refuses to start with a clear
 * reason instead of reading garbage or refusing every token. The secret key can be rotated: given the old file as
 * {@code previousKeyFile}, every secret is sealed again with the new one at start.
 */
public final class ServerKeys {
    private static final Logger LOG = LoggerFactory.getLogger(ServerKeys.class);
    static final String SECRETS = "secrets";
    static final String TOKENS = "tokens";

    private final SecretCipher secrets;
    private final TokenHasher tokens;

    private ServerKeys(SecretCipher secrets, TokenHasher tokens) {
        this.secrets = secrets;
        this.tokens = tokens;
    }

    public SecretCipher secrets() {
        return secrets;
    }

    public TokenHasher tokens() {
        return tokens;
    }

    /**
     * Reads (or makes) the key files, checks them against the store, rotates the secret key if asked, and upgrades
     * tokens stored with the old hash scheme.
     *
     * @param previousKeyFile the secret key before a rotation, or {@code null}
     * @throws IllegalStateException saying which file is missing or wrong, and what to do
     */
    public static ServerKeys open(Store store, Path keyFile, Path previousKeyFile, Path pepperFile, Clock clock) {
        requireNonNull(keyFile, "keyFile is null");
        requireNonNull(pepperFile, "pepperFile is null");
        SecretCipher cipher = secretKey(store, keyFile, previousKeyFile, clock);
        TokenHasher hasher = pepper(store, pepperFile, clock);
        upgradeTokenHashes(store, hasher);
        return new ServerKeys(cipher, hasher);
    }

    private static SecretCipher secretKey(Store store, Path file, Path previousFile, Clock clock) {
        Optional<String> registered = store.credentials().serverKeyId(SECRETS);
        byte[] key = KeyFile.read(file, "secret key");
        if (key == null) {
            int stored = store.credentials().secrets(null).size();
            if (registered.isPresent() || stored > 0) {
                throw new IllegalStateException("the store's secrets are sealed with key " + registered.orElse("(unregistered)") + ", but " + file
                        + " does not exist: restore that file from your backup, or set secrets.keyFile to where it is (servers sharing a store "
                        + "share one key file); without it the " + stored + " secret(s) cannot be read");
            }
            key = KeyFile.create(file, "secret key");
            LOG.info("created the secret key {} ({}); back it up: without it, secrets cannot be read", file, SecretCipher.keyId(SECRETS, key));
        }
        SecretCipher cipher = new SecretCipher(key);
        String current = register(store, SECRETS, cipher.keyId(), clock).orElse(cipher.keyId());
        if (!current.equals(cipher.keyId())) {
            SecretCipher previous = previousFile == null ? null : previous(previousFile);
            if (previous == null || !previous.keyId().equals(current)) {
                throw new IllegalStateException(file + " holds key " + cipher.keyId() + ", but the store's secrets are sealed with key " + current
                        + (previous == null ? "" : " (and secrets.previousKeyFile " + previousFile + " holds " + previous.keyId() + ")")
                        + ": start with the key file that sealed them (servers sharing a store share one); to rotate, set secrets.keyFile to the "
                        + "new file and secrets.previousKeyFile to the old one");
            }
            rotate(store, previous, cipher, clock);
        } else if (previousFile != null) {
            LOG.info("the secrets are sealed with {} already: secrets.previousKeyFile ({}) is no longer needed", cipher.keyId(), previousFile);
        }
        for (SecretRecord secret : store.credentials().secrets(null)) {
            if (!secret.keyId().equals(cipher.keyId())) {
                throw new IllegalStateException("secret " + secret.workspace() + "/" + secret.name() + " is sealed with key " + secret.keyId()
                        + ", not with " + cipher.keyId() + " of " + file + ": start with its key file");
            }
        }
        return cipher;
    }

    private static SecretCipher previous(Path file) {
        byte[] key = KeyFile.read(file, "previous secret key");
        if (key == null) {
            throw new IllegalStateException("secrets.previousKeyFile " + file + " does not exist");
        }
        return new SecretCipher(key);
    }

    /** Seals every secret, and every signing key of identity tokens, again with the new key, and moves the store to it, in one transaction. */
    private static void rotate(Store store, SecretCipher from, SecretCipher to, Clock clock) {
        int count = store.write(tx -> {
            List<SecretRecord> secrets = tx.credentials().secrets(null);
            for (SecretRecord secret : secrets) {
                Map<String, String> sealed = new LinkedHashMap<>();
                secret.sealed().forEach((key, value) -> {
                    SecretValue open = from.open(secret.workspace(), secret.name(), key, value);
                    sealed.put(key, to.seal(secret.workspace(), secret.name(), key, open));
                });
                tx.updateSecret(secret.withSealed(to.keyId(), sealed, secret.updatedAt()));
            }
            for (io.slipstream.store.IdentityKey key : tx.credentials().identityKeys()) {
                io.slipstream.store.IdentityKey again = SigningKeySeal.resealed(key, from, to);
                if (again != key) { // the signing keys of identity tokens, sealed alike
                    tx.removeIdentityKey(key.kid());
                    tx.addIdentityKey(again);
                }
            }
            tx.replaceServerKey(SECRETS, from.keyId(), to.keyId(), clock.instant());
            return secrets.size();
        });
        LOG.info("sealed {} secret(s) again with the new key {}; secrets.previousKeyFile can go now", count, to.keyId());
    }

    private static TokenHasher pepper(Store store, Path file, Clock clock) {
        Optional<String> registered = store.credentials().serverKeyId(TOKENS);
        byte[] pepper = KeyFile.read(file, "token pepper");
        if (pepper == null) {
            if (registered.isPresent()) {
                throw new IllegalStateException("the store's tokens are hashed with pepper " + registered.get() + ", but " + file
                        + " does not exist: restore that file from your backup, or set tokens.pepperFile to where it is (servers sharing a store "
                        + "share one); without it no token works (docs/operations.md: losing the key files)");
            }
            pepper = KeyFile.create(file, "token pepper");
            LOG.info("created the token pepper {}; back it up with the secret key", file);
        }
        TokenHasher hasher = new TokenHasher(pepper);
        String current = register(store, TOKENS, hasher.pepperId(), clock).orElse(hasher.pepperId());
        if (!current.equals(hasher.pepperId())) {
            throw new IllegalStateException(file + " holds pepper " + hasher.pepperId() + ", but the store's tokens are hashed with " + current
                    + ": start with the pepper file that hashed them (servers sharing a store share one)");
        }
        return hasher;
    }

    /** Registers {@code keyId} unless a key is registered already; returns the registered one. */
    private static Optional<String> register(Store store, String purpose, String keyId, Clock clock) {
        Optional<String> registered = store.credentials().serverKeyId(purpose);
        if (registered.isPresent()) {
            return registered;
        }
        try {
            store.commit(tx -> tx.registerServerKey(purpose, keyId, clock.instant()));
            return Optional.of(keyId);
        } catch (ConflictException e) {
            return store.credentials().serverKeyId(purpose); // another server registered one meanwhile
        }
    }

    /** Tokens stored as the plain SHA-256 of their secret get its HMAC instead: they keep working, and no plain hash stays. */
    private static void upgradeTokenHashes(Store store, TokenHasher hasher) {
        int upgraded = 0;
        for (TokenRecord token : store.credentials().tokens()) {
            if (token.hashScheme().equals(TokenRecord.SHA256)
                    && store.write(tx -> tx.rehashToken(token.id(), token.hash(), hasher.upgrade(token.hash()), TokenRecord.HMAC_SHA256))) {
                upgraded++;
            }
        }
        if (upgraded > 0) {
            LOG.info("stored {} token hash(es) as HMAC-SHA256 with the token pepper instead of plain SHA-256", upgraded);
        }
    }
}
