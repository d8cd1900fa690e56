package io.slipstream.server.secret;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.slipstream.api.spec.SecretValue;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import org.junit.jupiter.api.Test;

/** A sealed value opens only with its key and in its own row: elsewhere, or altered, it is refused, never garbage. */
class SecretCipherTest {
    private static final String VALUE = "hf_a-value-with-ünïcode";
    private final SecretCipher cipher = new SecretCipher(key(1));

    private static byte[] key(int seed) {
        byte[] key = new byte[32];
        java.util.Arrays.fill(key, (byte) seed);
        return key;
    }

    @Test
    void aValueOpensInItsOwnRowOnlyWithItsKey() {
        String sealed = cipher.seal("team-a", "hf", "token", SecretValue.of(VALUE));
        assertThat(sealed).doesNotContain(VALUE).doesNotContain(Base64.getEncoder().encodeToString(VALUE.getBytes(StandardCharsets.UTF_8)));
        assertThat(cipher.open("team-a", "hf", "token", sealed).reveal()).isEqualTo(VALUE);
        assertThat(cipher.seal("team-a", "hf", "token", SecretValue.of(VALUE))).as("a new nonce every time").isNotEqualTo(sealed);

        for (String[] elsewhere : new String[][] {{"team-b", "hf", "token"}, {"team-a", "db", "token"}, {"team-a", "hf", "user"}}) {
            assertThatThrownBy(() -> cipher.open(elsewhere[0], elsewhere[1], elsewhere[2], sealed))
                    .isInstanceOf(SecretCipher.SecretUnreadableException.class).hasMessageNotContaining(VALUE);
        }
        assertThatThrownBy(() -> new SecretCipher(key(2)).open("team-a", "hf", "token", sealed))
                .isInstanceOf(SecretCipher.SecretUnreadableException.class).hasMessageContaining(new SecretCipher(key(2)).keyId());
        byte[] altered = Base64.getDecoder().decode(sealed);
        altered[altered.length - 20] ^= 1;
        assertThatThrownBy(() -> cipher.open("team-a", "hf", "token", Base64.getEncoder().encodeToString(altered)))
                .isInstanceOf(SecretCipher.SecretUnreadableException.class);
        assertThatThrownBy(() -> cipher.open("team-a", "hf", "token", "not base64!")).isInstanceOf(SecretCipher.SecretUnreadableException.class);
        assertThatThrownBy(() -> cipher.open("team-a", "hf", "token", "AQ==")).isInstanceOf(SecretCipher.SecretUnreadableException.class);
    }

    @Test
    void keysAreNamedWithoutBeingRevealed() {
        assertThat(cipher.keyId()).matches("secrets-[0-9a-f]{16}").isEqualTo(new SecretCipher(key(1)).keyId())
                .isNotEqualTo(new SecretCipher(key(2)).keyId());
        assertThat(SecretCipher.keyId("tokens", key(1))).isNotEqualTo(cipher.keyId().replace("secrets", "tokens"));
        assertThat(cipher.toString()).contains(cipher.keyId());
        assertThatThrownBy(() -> new SecretCipher(new byte[16])).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void tokenHashesAreKeyedAndOldOnesUpgradeToTheSame() {
        TokenHasher hasher = new TokenHasher(key(3));
        String secret = "ss_abc";
        String hash = hasher.hash(secret);
        assertThat(hash).hasSize(64).isNotEqualTo(TokenHasher.sha256Hex(secret)).isNotEqualTo(new TokenHasher(key(4)).hash(secret));
        assertThat(hasher.upgrade(TokenHasher.sha256Hex(secret))).isEqualTo(hash);
        assertThat(TokenHasher.matches(hash, hasher.hash(secret))).isTrue();
        assertThat(TokenHasher.matches(hash, hasher.hash("ss_abd"))).isFalse();
    }
}
