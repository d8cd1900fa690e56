package io.slipstream.server.secret;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.slipstream.api.spec.SecretValue;
import io.slipstream.store.SecretRecord;
import io.slipstream.store.Store;
import io.slipstream.store.TokenRecord;
import io.slipstream.store.jdbc.JdbcStore;
import io.slipstream.testing.TestingClock;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The key files against the store: made once, the same one required after, a wrong or missing one refused with what to do. */
class ServerKeysTest {
    @TempDir
    Path dir;

    private final TestingClock clock = new TestingClock();
    private Store store;
    private Path keyFile;
    private Path pepperFile;

    @BeforeEach
    void open() {
        store = JdbcStore.openH2(dir.resolve("data"));
        keyFile = dir.resolve("data/secret.key");
        pepperFile = dir.resolve("data/token.pepper");
    }

    @AfterEach
    void close() {
        store.close();
    }

    private ServerKeys keys() {
        return ServerKeys.open(store, keyFile, null, pepperFile, clock);
    }

    private void storeSecret(ServerKeys keys, String value) {
        SecretCipher cipher = keys.secrets();
        store.write(tx -> tx.createSecret(new SecretRecord("team-a", "hf", cipher.keyId(), Map.of("token", cipher.seal("team-a", "hf", "token",
                SecretValue.of(value))), 0, clock.instant(), clock.instant())));
    }

    @Test
    void theFirstStartMakesPrivateKeyFilesAndLaterStartsUseThem() throws Exception {
        ServerKeys first = keys();
        for (Path file : new Path[] {keyFile, pepperFile}) {
            assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(file))).isEqualTo("rw-------");
            assertThat(java.util.Base64.getDecoder().decode(Files.readString(file).trim())).hasSize(32);
        }
        assertThat(store.credentials().serverKeyId("secrets")).contains(first.secrets().keyId());
        assertThat(store.credentials().serverKeyId("tokens")).contains(first.tokens().pepperId());
        ServerKeys again = keys();
        assertThat(again.secrets().keyId()).isEqualTo(first.secrets().keyId());
        assertThat(again.tokens().hash("ss_x")).isEqualTo(first.tokens().hash("ss_x"));
    }

    @Test
    void aMissingOrWrongKeyFileStopsTheStartWithWhatToDo() throws Exception {
        ServerKeys keys = keys();
        storeSecret(keys, "v");
        Path saved = Files.move(keyFile, dir.resolve("backup.key"));
        assertThatThrownBy(this::keys).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining(keys.secrets().keyId()).hasMessageContaining("does not exist").hasMessageContaining("backup");
        assertThat(keyFile).as("no new key replaces the lost one").doesNotExist();

        Files.writeString(keyFile, java.util.Base64.getEncoder().encodeToString(new byte[32]) + "\n");
        assertThatThrownBy(this::keys).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("sealed with key " + keys.secrets().keyId()).hasMessageContaining("previousKeyFile");
        Files.writeString(keyFile, "not a key\n");
        assertThatThrownBy(this::keys).isInstanceOf(IllegalStateException.class).hasMessageContaining("32 bytes as one line of base64");

        Files.move(saved, keyFile, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        assertThat(keys().secrets().keyId()).isEqualTo(keys.secrets().keyId());

        Files.delete(pepperFile);
        assertThatThrownBy(this::keys).isInstanceOf(IllegalStateException.class).hasMessageContaining("no token works");
        Files.writeString(pepperFile, java.util.Base64.getEncoder().encodeToString(new byte[32]) + "\n");
        assertThatThrownBy(this::keys).isInstanceOf(IllegalStateException.class).hasMessageContaining(keys.tokens().pepperId());
    }

    @Test
    void rotatingSealsEverySecretWithTheNewKey() throws Exception {
        ServerKeys old = keys();
        storeSecret(old, "the-value");
        io.slipstream.api.spec.SecretValue signingKey = io.slipstream.api.spec.SecretValue.of("cGtjczg=");
        store.commit(tx -> tx.addIdentityKey(new io.slipstream.store.IdentityKey("kid-1", clock.instant(),
                SigningKeySeal.seal(old.secrets(), "kid-1", signingKey), "{}")));
        Path previous = Files.move(keyFile, dir.resolve("old.key"));
        // The new key is made by hand (a server never makes one while secrets are sealed with another).
        byte[] fresh = new byte[32];
        new java.security.SecureRandom().nextBytes(fresh);
        Files.writeString(keyFile, java.util.Base64.getEncoder().encodeToString(fresh) + "\n");

        ServerKeys rotated = ServerKeys.open(store, keyFile, previous, pepperFile, clock);
        assertThat(rotated.secrets().keyId()).isNotEqualTo(old.secrets().keyId());
        assertThat(store.credentials().serverKeyId("secrets")).contains(rotated.secrets().keyId());
        SecretRecord secret = store.credentials().secret("team-a", "hf").orElseThrow();
        assertThat(secret.keyId()).isEqualTo(rotated.secrets().keyId());
        assertThat(rotated.secrets().open("team-a", "hf", "token", secret.sealed().get("token")).reveal()).isEqualTo("the-value");
        assertThatThrownBy(() -> old.secrets().open("team-a", "hf", "token", secret.sealed().get("token")))
                .isInstanceOf(SecretCipher.SecretUnreadableException.class);
        // The signing key of identity tokens, sealed alike, is sealed again in the same transaction.
        String sealedKey = store.credentials().identityKeys().get(0).sealedPrivateKey();
        assertThat(SigningKeySeal.open(rotated.secrets(), "kid-1", sealedKey).reveal()).isEqualTo("cGtjczg=");
        assertThatThrownBy(() -> SigningKeySeal.open(old.secrets(), "kid-1", sealedKey)).isInstanceOf(SecretCipher.SecretUnreadableException.class);
        // Done: the previous file is no longer needed, and the old key alone is refused now.
        assertThat(ServerKeys.open(store, keyFile, previous, pepperFile, clock).secrets().keyId()).isEqualTo(rotated.secrets().keyId());
        assertThatThrownBy(() -> ServerKeys.open(store, previous, null, pepperFile, clock)).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void tokensStoredAsPlainSha256AreUpgradedToTheirHmac() {
        String secret = "ss_old-token";
        store.commit(tx -> tx.createToken(new TokenRecord("tok-old", TokenHasher.sha256Hex(secret), TokenRecord.SHA256, "alice", false, null, clock.instant(), null,
                null, null)));
        ServerKeys keys = keys();
        TokenRecord upgraded = store.credentials().tokenByHash(keys.tokens().hash(secret)).orElseThrow();
        assertThat(upgraded.id()).isEqualTo("tok-old");
        assertThat(upgraded.hashScheme()).isEqualTo(TokenRecord.HMAC_SHA256);
        assertThat(store.credentials().tokenByHash(TokenHasher.sha256Hex(secret))).isEmpty();
        keys();
        assertThat(store.credentials().tokens()).singleElement().extracting(TokenRecord::hash).isEqualTo(keys.tokens().hash(secret));
    }
}
